"""The "trust this project?" dialog (answers True or False).

Shown once before a lead is launched in a project its person has not trusted
(`okstra_core.trust`): the agent CLIs run the project's own settings, so the first
launch there is a decision, never the effect of a stray Enter — "Not now" has the focus.
"""

from __future__ import annotations

from pathlib import Path
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


class TrustScreen(ModalScreen[bool]):
    """Ask whether to trust the project before its first launch.

    Args:
        project: the project's directory (shown in full).
    """

    CSS_PATH = stylesheet("trust")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Trust"),
        Binding("n,escape", "answer(False)", "Not now"),
    ]

    def __init__(self, project: Path) -> None:
        super().__init__()
        self.project = project

    def compose(self) -> ComposeResult:
        text = ui_text(self)
        with Vertical(id="dialog"):
            yield Plain(text.get("app.trust.question"), id="question")
            yield Plain(text.get("app.trust.detail", project=self.project), id="detail")
            with Horizontal(id="buttons"):
                yield Button(text.get("app.trust.yes"), id="trust", variant="warning", compact=True)
                yield Button(text.get("app.trust.no"), id="not-now", compact=True)
        yield Footer()

    def on_mount(self) -> None:
        button = part(self, "#not-now", Button)
        if button is not None:
            button.focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        close(self, event.button.id == "trust")

    def action_answer(self, yes: bool) -> None:
        close(self, yes)
