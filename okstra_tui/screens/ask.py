"""A yes/no question before a destructive action (stop a running lead, abort a setup);
No unless the person says yes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual.binding import BindingType
from textual.screen import Screen

from ..resources import stylesheet, ui_text
from .dialog import Words, YesNoScreen, answer_keys

if TYPE_CHECKING:
    from okstra_core.life.runs import RunRow
    from okstra_core.wizard.text import WizardText


class AskScreen(YesNoScreen):
    """Ask before doing something that cannot be undone (No has the focus); `yes` and
    `no` are the buttons' texts ("Stop (y)", "Keep running (n)")."""

    CSS_PATH = stylesheet("ask")
    BINDINGS: ClassVar[list[BindingType]] = answer_keys("Yes", "No")

    def __init__(self, question: str, detail: str, *, yes: str, no: str) -> None:
        super().__init__()
        self.question = question
        self.detail = detail
        self.yes_label = yes
        self.no_label = no

    def words(self) -> Words:
        return Words(self.question, self.detail, self.yes_label, self.no_label)


def stop_question(row: RunRow, text: WizardText) -> AskScreen:
    """ "Stop the lead of <run>?" for a row of the runs lists."""
    return AskScreen(
        text.get("app.ask.stop_question", run=row.run_id),
        text.get("app.ask.stop_detail", task=row.task_key, lead=row.lead_status()),
        yes=text.get("app.ask.stop_yes"),
        no=text.get("app.ask.stop_no"),
    )


def ask_to_stop(screen: Screen[Any], row: RunRow, stop: Callable[[Path], object]) -> None:
    """Ask "Stop the lead of <run>?" over `screen` (default No, asked once); on yes,
    `stop(run_dir)`."""
    if not screen.is_active:
        return
    run_dir = row.run_dir

    def answered(yes: bool | None) -> None:
        if yes:
            stop(run_dir)

    screen.app.push_screen(stop_question(row, ui_text(screen)), answered)


def abort_question(text: WizardText) -> AskScreen:
    """ "Abort this setup?" for the confirm screen's Abort."""
    return AskScreen(
        text.get("app.ask.abort_question"),
        text.get("app.ask.abort_detail"),
        yes=text.get("app.ask.abort_yes"),
        no=text.get("app.ask.abort_no"),
    )
