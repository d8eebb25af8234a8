"""The "launch another run of this setup?" dialog (answers True or False).

Shown before prepare when the confirmed setup already launched a run: a second run is
a decision, never the effect of a stray Enter — so "Not now" has the focus.
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


class RelaunchScreen(ModalScreen[bool]):
    """Ask before a setup that already launched a run launches another.

    Args:
        task: the setup's task (key · task type).
        run_id: the newest run it launched.
        run_dir: that run's directory (shown in full).
    """

    CSS_PATH = stylesheet("relaunch")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Launch another"),
        Binding("n,escape", "answer(False)", "Not now"),
    ]

    def __init__(self, task: str, run_id: str, run_dir: Path) -> None:
        super().__init__()
        self.task_name = task
        self.run_id = run_id
        self.run_dir = run_dir

    def compose(self) -> ComposeResult:
        text = ui_text(self)
        with Vertical(id="dialog"):
            yield Plain(
                text.get("app.relaunch.question", task=self.task_name, run_id=self.run_id),
                id="question",
            )
            yield Plain(text.get("app.relaunch.detail", run_dir=self.run_dir), id="detail")
            with Horizontal(id="buttons"):
                yield Button(
                    text.get("app.relaunch.yes"), id="again", variant="warning", compact=True
                )
                yield Button(text.get("app.relaunch.no"), id="not-now", compact=True)
        yield Footer()

    def on_mount(self) -> None:
        button = part(self, "#not-now", Button)
        if button is not None:
            button.focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        close(self, event.button.id == "again")

    def action_answer(self, yes: bool) -> None:
        close(self, yes)
