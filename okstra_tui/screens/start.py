"""The start screen: resume a wizard (newest first), or start a new setup."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, Header, OptionList, Static

from ..messages import WizardChosen
from ..resources import stylesheet
from ..widgets import OptionTable, Row

NEW = "new"


def ago(then: datetime | None, now: datetime) -> str:
    """A short, human "last update" relative to `now` (the app's clock)."""
    if then is None:
        return "—"
    seconds = max(0, int((now - then).total_seconds()))
    if seconds < 60:
        return "just now"
    for size, unit in ((86400, "d"), (3600, "h"), (60, "min")):
        if seconds >= size:
            return f"{seconds // size} {unit} ago"
    return "just now"  # unreachable: seconds >= 60 matched "min"


def summary_row(summary: Any, now: datetime) -> Row:
    """One resumable wizard: task, task type, "step n of ~m", last update."""
    answered, total = summary.progress
    task = summary.task or "(task not chosen)"
    if summary.legacy:
        task += " [v1]"
    return Row(
        value=str(summary.path),
        cells=(
            task,
            summary.task_type or "—",
            f"step {answered + 1} of ~{total}",
            ago(summary.updated_at, now),
        ),
        disabled_reason=summary.problem,
    )


class StartScreen(Screen[None]):
    """Resumable wizards and "New setup".

    Args:
        summaries: the wizards `list_wizards` found, newest first.
        now: the app's clock reading, for "last update".
        error: an error to show (a wizard that could not be opened).
    """

    CSS_PATH = stylesheet("start")

    def __init__(self, summaries: Sequence[Any], now: datetime, error: str = "") -> None:
        super().__init__()
        self.summaries = tuple(summaries)
        self.now = now
        self.error = error

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="start"):
            yield Static("Set up a team of agents for one task.", id="intro")
            rows = [Row(NEW, ("New setup", "", "", ""))]
            rows += [summary_row(s, self.now) for s in self.summaries]
            yield OptionTable(rows, selected=NEW, id="wizards")
            if not self.summaries:
                yield Static("No setup to resume.", id="empty")
            yield Static(self.error, id="error", classes="-visible" if self.error else "")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#wizards", OptionTable).focus()

    def show_error(self, message: str) -> None:
        error = self.query_one("#error", Static)
        error.update(message)
        error.set_class(bool(message), "-visible")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        value = event.option.id
        self.post_message(WizardChosen(None if value == NEW else Path(str(value))))
