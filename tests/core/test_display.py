"""Text printed for people is inert: `okstra_core.display` (unit and property tests)."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console
from rich.text import Text

from okstra_core.display import inert, inert_markup

BIDI = {0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)}


def unsafe(char: str, *, keep_newlines: bool) -> bool:
    """The characters `inert` must never let through (the oracle of the properties)."""
    code = ord(char)
    if keep_newlines and char in "\n\t":
        return False
    return (
        code < 0x20
        or 0x7F <= code <= 0x9F
        or code in BIDI
        or 0xD800 <= code <= 0xDFFF
        or (not keep_newlines and code in (0x2028, 0x2029))
    )


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b]52;c;aGk=\x07", "\\x1b]52;c;aGk=\\x07"),  # OSC 52: writes the clipboard
        ("\x1b]0;title\x07", "\\x1b]0;title\\x07"),  # OSC 0: the window title
        ("\x1b[2J\x1b[H", "\\x1b[2J\\x1b[H"),  # clear screen, cursor home
        (
            "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\",
            "\\x1b]8;;http://x\\x1b\\link\\x1b]8;;\\x1b\\",
        ),
        ("\x9b31m", "\\x9b31m"),  # C1 CSI
        ("abc\u202edcba", "abc\\u202edcba"),  # right-to-left override
        ("a\u2066b\u2069", "a\\u2066b\\u2069"),  # isolates
        ("\x00\x7f", "\\x00\\x7f"),
        ("name\udcff", "name\\udcff"),  # a lone surrogate (a file name not in UTF-8)
        ("two\nlines\ttab", "two\\x0alines\\x09tab"),
        ("para\u2028graph", "para\\u2028graph"),
    ],
)
def test_control_sequences_are_shown_as_visible_escapes(raw: str, shown: str) -> None:
    assert inert(raw) == shown


def test_newlines_and_tabs_can_be_kept_for_a_block_of_lines() -> None:
    assert inert("one\r\ntwo\tx\rthree\x1b", keep_newlines=True) == "one\ntwo\tx\\x0dthree\\x1b"


def test_values_of_any_type_are_converted_first() -> None:
    assert inert(42) == "42"
    assert inert(None) == "None"


@pytest.mark.parametrize(
    "markup", ["[/bold]", "[red]x", "[link=file:///etc]y[/link]", "[@click=quit]"]
)
def test_inert_markup_makes_rich_show_the_brackets(markup: str) -> None:
    escaped = inert_markup(f"{markup}\x1b")
    assert Text.from_markup(escaped).plain == f"{markup}\\x1b"
    console = Console(record=True, width=80)
    console.print(escaped)  # never a MarkupError
    assert console.export_text().rstrip("\n") == f"{markup}\\x1b"


@given(st.text(), st.booleans())
def test_output_never_holds_a_control_bidi_or_surrogate_char(text: str, keep: bool) -> None:
    out = inert(text, keep_newlines=keep)
    assert not [c for c in out if unsafe(c, keep_newlines=keep)], repr(out)


@given(st.text(), st.booleans())
def test_inert_text_is_inert_already(text: str, keep: bool) -> None:
    once = inert(text, keep_newlines=keep)
    assert inert(once, keep_newlines=keep) == once


printable = st.text(st.characters(codec="utf-8")).filter(str.isprintable)


@given(printable)
def test_printable_text_is_unchanged(text: str) -> None:
    assert inert(text) == text
    assert inert(text, keep_newlines=True) == text


@given(st.lists(printable, max_size=5))
def test_lines_of_printable_text_are_unchanged_when_newlines_are_kept(lines: list[str]) -> None:
    block = "\n\t".join(lines)
    assert inert(block, keep_newlines=True) == block


@given(st.text())
def test_every_escape_names_the_character_it_replaced(text: str) -> None:
    """Nothing is dropped: each unsafe character becomes its own code, in order."""
    out = inert(text)
    expected = "".join(
        (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")
        if unsafe(c, keep_newlines=False)
        else c
        for c in text
    )
    assert out == expected


def test_the_oracle_matches_unicode_categories() -> None:
    """Every Cc character is unsafe; the bidi set is the explicit bidi formatting
    characters (embeddings, overrides, isolates) and the three bidi marks."""
    for code in range(0x110000):
        if unicodedata.category(chr(code)) == "Cc":
            assert unsafe(chr(code), keep_newlines=False)
    explicit = {"LRE", "RLE", "PDF", "LRO", "RLO", "LRI", "RLI", "FSI", "PDI"}
    found = {c for c in range(0x110000) if unicodedata.bidirectional(chr(c)) in explicit}
    marks = {0x061C, 0x200E, 0x200F}  # ALM, LRM, RLM
    assert found | marks == BIDI
