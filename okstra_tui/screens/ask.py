"""A yes/no question before a destructive action (stop a running lead, abort a setup).

The answer is No unless the person says yes: No has the focus (a stray Enter keeps
things as they are), `y` answers yes, `n` and Escape answer no.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, Footer

from ..resources import stylesheet, ui_text
from ..widgets import Plain
from .stale import close, part

if TYPE_CHECKING:
    from okstra_core.life.runs import RunRow
    from okstra_core.wizard.text import WizardText


class AskScreen(ModalScreen[bool]):
    """Ask before doing something that cannot be undone; No has the focus.

    Args:
        question: the question (one line, bold).
        detail: what happens, and what stays (data in it is shown inert).
        yes: the Yes button's text, from the text catalog (names the action, "Stop (y)").
        no: the No button's text (e.g. "Keep running (n)").
    """

    CSS_PATH = stylesheet("ask")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(self, question: str, detail: str, *, yes: str, no: str) -> None:
        super().__init__()
        self.question = question
        self.detail = detail
        self.yes_label = yes
        self.no_label = no

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Plain(self.question, id="question")
            if self.detail:
                yield Plain(self.detail, id="detail")
            with Horizontal(id="buttons"):
                yield Button(self.yes_label, id="yes", variant="error", compact=True)
                yield Button(self.no_label, id="no", compact=True)
        yield Footer()

    def on_mount(self) -> None:
        button = part(self, "#no", Button)
        if button is not None:
            button.focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        close(self, event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        close(self, yes)


def stop_question(row: RunRow, text: WizardText) -> AskScreen:
    """ "Stop the lead of <run>?" for a row of the runs lists."""
    return AskScreen(
        text.get("app.ask.stop_question", run=row.run_id),
        text.get("app.ask.stop_detail", task=row.task_key, lead=row.lead_status()),
        yes=text.get("app.ask.stop_yes"),
        no=text.get("app.ask.stop_no"),
    )


def ask_to_stop(screen: Screen[Any], row: RunRow, stop: Callable[[Path], object]) -> None:
    """Ask "Stop the lead of <run>?" over `screen` (default No); on yes, `stop(run_dir)`.

    A second `s` while the question opens asks nothing more (`screen` is no longer the
    active one)."""
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
