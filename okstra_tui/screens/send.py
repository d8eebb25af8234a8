"""A written follow-up for an ended worker: one line, Enter sends, Escape cancels (the
runs screen sends it and shows what the core said)."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Input

from ..resources import stylesheet
from ..widgets import Plain
from .stale import close


class SendScreen(ModalScreen[str | None]):
    """Ask for the follow-up to send to a worker (None: cancelled, or nothing typed)."""

    CSS_PATH = stylesheet("send")
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, question: str, detail: str) -> None:
        super().__init__()
        self.question = question
        self.detail = detail

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Plain(self.question, id="question")
            yield Plain(self.detail, id="detail")
            yield Input(id="follow-up")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#follow-up", Input).focus()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        close(self, event.value if event.value.strip() else None)

    def action_cancel(self) -> None:
        close(self, None)
