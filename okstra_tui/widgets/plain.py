"""Data on screen is shown as it is: never read as markup, never a control sequence.

What the app shows comes partly from data a repository or an edited file may carry:
run files, wizard state files, a lead's last lines, task keys, brief paths, directive
text, model names of a user's provider files, error messages quoting any of these.
Two rules hold for all of it:

* **Never markup.** A string handed to a Textual widget is parsed as markup by default
  (`[/bold]` raises MarkupError and ends the app, `[@click=app.quit]` is an action).
  Data goes in as a `rich.text.Text`, or into a `Plain` (a `Static` with markup off).
* **Never a control sequence.** Textual writes the characters of a text to the terminal
  as they are (it drops only BEL, BS, VT, FF and CR): an ESC in a task key would start
  an OSC 52 (the clipboard), a title change or a cursor move. Every character of data
  goes through `okstra_core.display.inert`, which shows control characters and bidi
  controls as visible escapes (`\\x1b`, `\\u202e`).

`line` (one line: newlines escaped too) and `block` (lines kept) make a value inert;
`inert_text` makes a `Text` already built inert, keeping its styles; `Plain` does both
for whatever it is given.
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
    """`text` with every control character shown as its escape, each in its own style.

    A `Text` already drops BEL, BS, VT, FF and CR when it is built; ESC and the rest
    stay, and are escaped here. Text without such a character is returned as it is.
    """
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
