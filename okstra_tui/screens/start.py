"""The start screen: resume a wizard (newest first), start a new setup, or delete one."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, Header, OptionList, Static

from okstra_core.wizard.text import WizardText

from ..messages import DeleteRequested, WizardChosen
from ..resources import stylesheet, ui_text
from ..widgets import OptionTable, Row
from .delete import DeleteWizardScreen

NEW = "new"


def ago(then: datetime | None, now: datetime, text: WizardText) -> str:
    """A short, human "last update" relative to `now` (the app's clock)."""
    if then is None:
        return text.get("app.start.unknown")
    seconds = max(0, int((now - then).total_seconds()))
    for size, unit in ((86400, "days"), (3600, "hours"), (60, "minutes")):
        if seconds >= size:
            return text.get(f"app.start.{unit}_ago", count=seconds // size)
    return text.get("app.start.just_now")


def summary_task(summary: Any, text: WizardText) -> str:
    """The task column of a wizard: its task key, or that none was chosen yet."""
    task = summary.task or text.get("app.start.task_not_chosen")
    return text.get("app.start.legacy", task=task) if summary.legacy else task


def summary_row(summary: Any, now: datetime, text: WizardText) -> Row:
    """One resumable wizard: task, task type, "step n of ~m", last update."""
    answered, total = summary.progress
    return Row(
        value=str(summary.path),
        cells=(
            summary_task(summary, text),
            summary.task_type or text.get("app.start.unknown"),
            text.get("app.start.step", current=answered + 1, total=total),
            ago(summary.updated_at, now, text),
        ),
        disabled_reason=summary.problem,
    )


def default_choice(summaries: Sequence[Any]) -> str:
    """What Enter does first: resume the newest unfinished wizard, else a new setup.

    `summaries` is newest first. Only a wizard still in progress counts: a confirmed
    one has usually been launched already, an aborted or broken one cannot resume.
    """
    for summary in summaries:
        if summary.status == "in-progress" and summary.problem is None:
            return str(summary.path)
    return NEW


class StartScreen(Screen[None]):
    """Resumable wizards and "New setup".

    Args:
        summaries: the wizards `list_wizards` found, newest first.
        now: the app's clock reading, for "last update".
        error: an error to show (a wizard that could not be opened or deleted).
    """

    CSS_PATH = stylesheet("start")
    BINDINGS: ClassVar[list[BindingType]] = [Binding("d", "delete", "Delete")]

    def __init__(self, summaries: Sequence[Any], now: datetime, error: str = "") -> None:
        super().__init__()
        self.summaries = tuple(summaries)
        self.now = now
        self.error = error

    def compose(self) -> ComposeResult:
        text = ui_text(self)
        yield Header()
        with Vertical(id="start"):
            yield Static(text.get("app.start.intro"), id="intro")
            rows = [Row(NEW, (text.get("app.start.new"), "", "", ""))]
            rows += [summary_row(s, self.now, text) for s in self.summaries]
            header = tuple(
                text.get(f"app.start.column.{c}") for c in ("task", "type", "progress", "updated")
            )
            table = OptionTable(
                rows, selected=default_choice(self.summaries), header=header, id="wizards"
            )
            yield Static(table.header_text(), id="columns")
            yield table
            if not self.summaries:
                yield Static(text.get("app.start.empty"), id="empty")
            yield Static(self.error, id="error", classes="-visible" if self.error else "")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#wizards", OptionTable).focus()

    def on_option_table_layout_changed(self, message: OptionTable.LayoutChanged) -> None:
        self.query_one("#columns", Static).update(message.table.header_text())

    def show_error(self, message: str) -> None:
        error = self.query_one("#error", Static)
        error.update(message)
        error.set_class(bool(message), "-visible")

    def _highlighted(self) -> Any | None:
        """The summary of the highlighted wizard (None on "New setup" or before compose)."""
        table = next(self.query("#wizards").results(OptionTable), None)
        if table is None:
            return None
        highlighted = table.highlighted_value
        return next((s for s in self.summaries if str(s.path) == highlighted), None)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # "Delete" is shown only while a wizard (not "New setup") is highlighted.
        if action == "delete":
            return self._highlighted() is not None
        return True

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self.refresh_bindings()

    def action_delete(self) -> None:
        summary = self._highlighted()
        if summary is None:
            return
        path = Path(summary.path)

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.post_message(DeleteRequested(path))

        self.app.push_screen(
            DeleteWizardScreen(summary_task(summary, ui_text(self)), path), confirmed
        )

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        value = event.option.id
        self.post_message(WizardChosen(None if value == NEW else Path(str(value))))
