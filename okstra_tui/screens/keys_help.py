"""Help on any screen without a help panel of its own: the keys that act there (from its
bindings). Opened by `?` (F1 in a text box); Escape, `q` or `?` closes it."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer

from ..keys import key_rows
from ..resources import stylesheet, ui_text
from ..widgets import Plain
from .stale import close


def keys_text(rows: list[tuple[str, str]]) -> Text:
    """One line per action: its keys, padded (in cells) to one column, and what it does."""
    width = max((Text(keys).cell_len for keys, _ in rows), default=0)
    text = Text()
    for index, (keys, description) in enumerate(rows):
        if index:
            text.append("\n")
        text.append(keys, style="bold")
        text.append(" " * (width - Text(keys).cell_len + 2))
        text.append(description)
    return text


class KeysHelpScreen(ModalScreen[None]):
    """The keys of the `screen` it was opened over."""

    CSS_PATH = stylesheet("keys_help")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark,f1", "close", "Close"),
    ]

    def __init__(self, screen: Screen[Any]) -> None:
        super().__init__()
        self.rows = key_rows(screen)

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Plain(ui_text(self).get("app.ask.title_help"), id="title")
            with VerticalScroll(id="body"):
                yield Plain(keys_text(self.rows), id="keys")
        yield Footer()

    def action_close(self) -> None:
        close(self, None)
