"""Data on screen is shown as it is: never read as markup, never a control sequence.

Data (run and state files, a lead's last lines, task keys, model names, errors quoting
them) handed to a widget as a str is parsed as markup (`[/bold]` ends the app,
`[@click=app.quit]` is an action), and Textual writes an ESC as it is (an OSC 52, a
cursor move). So data goes in as a `Text` or a `Plain` (markup off), and every character
goes through `okstra_core.display.inert`: `line` (one line), `block` (lines kept),
`inert_text` (a built `Text`, styles kept).
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static

from okstra_core.display import inert


def line(value: object) -> str:
    """`value` as one inert line (a cell, a title: newlines and tabs escaped too)."""
    return inert(value)


def block(value: object) -> str:
    """`value` as inert lines (a detail, a message: newlines and tabs kept)."""
    return inert(value, keep_newlines=True)


def _unsafe(char: str) -> bool:
    return block(char) != char


def inert_text(text: Text) -> Text:
    """`text` with every control character shown as its escape, each in its own style
    (returned as it is without one)."""
    plain = text.plain
    if block(plain) == plain:
        return text
    unsafe = [i for i, char in enumerate(plain) if _unsafe(char)]
    cuts = sorted({*unsafe, *(i + 1 for i in unsafe)})
    shown = text.blank_copy()
    for part in text.divide(cuts):
        if len(part) == 1 and _unsafe(part.plain):
            escaped = Text(block(part.plain), style=part.style)
            for span in part.spans:
                escaped.stylize(span.style, 0, len(escaped))
            part = escaped
        shown.append_text(part)
    return shown


def shown(content: Any) -> Any:
    """What a `Plain` shows for `content`: a str or a Text made inert, else as is."""
    if isinstance(content, str):
        return block(content)
    if isinstance(content, Text):
        return inert_text(content)
    return content


class Plain(Static):
    """A `Static` for data: markup off, every control character shown as its escape."""

    def __init__(self, content: Any = "", **kwargs: Any) -> None:
        kwargs["markup"] = False
        super().__init__(shown(content), **kwargs)

    def update(self, content: Any = "", *, layout: bool = True) -> None:
        super().update(shown(content), layout=layout)
