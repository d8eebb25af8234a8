"""The "discard what you typed?" dialog: a rewind or Back would lose unsubmitted text."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Footer

from ..resources import stylesheet, ui_text
from ..widgets import Plain
from .stale import close, part

# How much of the typed text the dialog quotes.
_QUOTE = 60


class DiscardScreen(ModalScreen[bool]):
    """Ask before typed text is dropped by going back; Keep has the focus.

    Args:
        typed: the text that would be lost (quoted, shortened).
    """

    CSS_PATH = stylesheet("discard")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Discard"),
        Binding("n,escape", "answer(False)", "Keep typing"),
    ]

    def __init__(self, typed: str) -> None:
        super().__init__()
        self.typed = typed

    def compose(self) -> ComposeResult:
        text = ui_text(self)
        quoted = " ".join(self.typed.split())
        if len(quoted) > _QUOTE:
            quoted = quoted[: _QUOTE - 1] + "…"
        with Vertical(id="dialog"):
            yield Plain(text.get("app.discard.question"), id="question")
            yield Plain(text.get("app.discard.detail", text=quoted), id="detail")
            with Horizontal(id="buttons"):
                yield Button(
                    text.get("app.discard.yes"), id="discard", variant="error", compact=True
                )
                yield Button(text.get("app.discard.no"), id="keep", compact=True)
        yield Footer()

    def on_mount(self) -> None:
        # A stray Enter keeps the text: dropping it needs a deliberate choice.
        button = part(self, "#keep", Button)
        if button is not None:
            button.focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        close(self, event.button.id == "discard")

    def action_answer(self, yes: bool) -> None:
        close(self, yes)
