"""The "delete this setup?" dialog of the start screen (answers True or False)."""

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


class DeleteWizardScreen(ModalScreen[bool]):
    """Ask before a wizard's state file is deleted; Keep has the focus.

    Args:
        task: what the wizard is for (its task column on the start screen).
        path: the state file that would be deleted (shown in full).
    """

    CSS_PATH = stylesheet("delete")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Delete"),
        Binding("n,escape", "answer(False)", "Keep"),
    ]

    def __init__(self, task: str, path: Path) -> None:
        super().__init__()
        self.task_name = task
        self.path = path

    def compose(self) -> ComposeResult:
        text = ui_text(self)
        with Vertical(id="dialog"):
            yield Plain(text.get("app.delete.question", task=self.task_name), id="question")
            yield Plain(text.get("app.delete.detail", path=self.path), id="detail")
            with Horizontal(id="buttons"):
                yield Button(text.get("app.delete.yes"), id="delete", variant="error", compact=True)
                yield Button(text.get("app.delete.no"), id="keep", compact=True)
        yield Footer()

    def on_mount(self) -> None:
        # A stray Enter keeps the setup: deleting needs a deliberate choice.
        button = part(self, "#keep", Button)
        if button is not None:
            button.focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        close(self, event.button.id == "delete")

    def action_answer(self, yes: bool) -> None:
        close(self, yes)
