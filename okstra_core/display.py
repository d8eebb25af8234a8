"""Text for people, made inert: what okstra prints from data can never drive a terminal.

Run files, state files and a lead's screen are data a repository (or an agent) may
have written. Printed raw, a field could carry terminal control sequences: OSC 52
writes the clipboard, OSC 0 sets the window title, CSI clears the screen or moves the
cursor, OSC 8 hides a link; bidi overrides reorder what a person reads. Every field
printed for people goes through `inert`, which replaces each such character by a
visible escape (`\\x1b`, `\\u202e`). JSON output is never passed through it: JSON
escapes control characters itself and must stay exact.

Rich markup in data is a separate matter: a field printed through Rich is passed as a
`rich.text.Text` (or with `markup=False`), never as a markup string; `inert_markup`
is for the few places that must build a markup string around data.
"""

from __future__ import annotations

import functools
import re
from datetime import datetime

# C0 controls (but tab and newline, which callers choose to keep), DEL, C1 controls,
# the Unicode bidi embeddings, overrides and isolates (and the Arabic letter mark), and
# lone surrogates (a file name that was not UTF-8, or a JSON "\\ud800": written to a
# UTF-8 terminal they raise instead of printing).
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_UNSAFE = f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}\ud800-\udfff]"
# One line: newline and tab too, and the Unicode line and paragraph separators.
_UNSAFE_LINE = f"[\x00-\x1f\x7f-\x9f{_BIDI}\u2028\u2029\ud800-\udfff]"


@functools.cache
def _pattern(source: str) -> re.Pattern[str]:
    """Compiled on first use: every command imports this module, few print data."""
    return re.compile(source)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def inert(text: object, *, keep_newlines: bool = False) -> str:
    """`text` with every control character and bidi control shown as a visible escape.

    Args:
        text: any value; it is converted with `str()` first.
        keep_newlines: keep `\\n` and `\\t` (a block of lines, such as a lead's last
            lines); otherwise they are escaped too (a one-line field stays one line).
    """
    value = str(text)
    pattern = _pattern(_UNSAFE if keep_newlines else _UNSAFE_LINE)
    if keep_newlines:
        value = value.replace("\r\n", "\n")
    return pattern.sub(_escape, value)


def inert_markup(text: object, *, keep_newlines: bool = False) -> str:
    """`inert(text)` with Rich markup escaped, for a markup string built around data."""
    value = inert(text, keep_newlines=keep_newlines)
    # Rich's own rule (rich.markup.escape), without importing Rich: a backslash before
    # an opening bracket that starts a tag makes the bracket literal.
    return re.sub(r"(\\*)(\[[a-zA-Z#/@].*?\])", r"\1\1\\\2", value)


# --------------------------------------------------------------------------- screens
#
# Lines read from an agent CLI's screen (a tmux pane) or log. A CLI draws spaces that
# are not spaces: claude's empty input line is `❯`, a no-break space (U+00A0), then a
# space. Every line read from a screen is made plain once, here, so a pattern such as
# `^\s*❯ ` sees what a person sees.

_NO_BREAK = "\u00a0\u2007\u202f"
_TRAILING = re.compile(r"\s+\Z")
# Banner art: block elements, Braille patterns, and the box-drawing characters that
# draw logos (not rules, which are one repeated character and say nothing either).
_ART = re.compile(r"[\u2580-\u259f\u2800-\u28ff\u2500-\u257f]")


def screen_line(line: str) -> str:
    """One line of a CLI's screen as compared and shown: no-break spaces read as
    spaces, trailing whitespace kept as one space (an input line `❯ ` stays itself)."""
    for char in _NO_BREAK:
        line = line.replace(char, " ")
    return _TRAILING.sub(" ", line)


def is_art(line: str) -> bool:
    """Whether a screen line is drawing, not words: mostly block, Braille or
    box-drawing characters (a CLI's banner logo, a rule)."""
    shown = [char for char in line if not char.isspace()]
    if not shown:
        return False
    drawn = sum(1 for char in shown if _ART.match(char))
    return drawn * 2 > len(shown)


def words_of(lines: list[str], count: int) -> list[str]:
    """The last `count` lines of a screen that say something: banner art and blank
    lines skipped, each right-stripped."""
    kept = [line.rstrip() for line in lines if line.strip() and not is_art(line)]
    return kept[-count:] if count > 0 else []


# How long ago something happened, largest unit first.
_AGE_UNITS = (("d", 86400), ("h", 3600), ("m", 60))
UNKNOWN_AGE = "—"


def age(seconds: float | None) -> str:
    """How long ago, in the one format okstra shows everywhere (the CLI's tables and the
    app's): `45s`, `12m`, `3h`, `2d` (whole units, rounded down); `—` when unknown."""
    if seconds is None:
        return UNKNOWN_AGE
    whole = max(0, int(seconds))
    for unit, size in _AGE_UNITS:
        if whole >= size:
            return f"{whole // size}{unit}"
    return f"{whole}s"


def age_since(then: datetime | None, now: datetime) -> str:
    """`age` of `then` at `now` (`—` when `then` is unknown)."""
    return age(None if then is None else (now - then).total_seconds())


def status_label(state: str, exit_status: int | None, signal: int | None) -> str:
    """What people read: `exited 3`, `exited (signal 9)`, `stopped` (how a stopped
    worker's CLI ended is in the JSON only)."""
    if state == "exited":
        if signal is not None:
            return f"{state} (signal {signal})"
        if exit_status is not None:
            return f"{state} {exit_status}"
    return state
