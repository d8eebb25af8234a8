"""The keys of a screen that lists runs: attach, stop (after asking), resume the lead."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual import work
from textual.screen import Screen

from .. import run_actions
from ..resources import ui_text
from .dialog import ask, on_yes

if TYPE_CHECKING:
    from okstra_core.environment import Environment
    from okstra_core.life.runs import RunRow


class RunKeysScreen(Screen[None]):
    """Base of the screens that list runs; a subclass gives `environment` and the three
    hooks `_run`, `_show_run_detail` and `load_runs`."""

    environment: Environment

    def _run(self) -> RunRow | None:
        """The highlighted run (None: none, or its table does not have the focus)."""
        raise NotImplementedError

    def _show_run_detail(self, message: str = "") -> None:
        """Show the highlighted run's status, and what an action said (`message`)."""
        raise NotImplementedError

    def load_runs(self) -> object:
        """Read the runs again (a subclass may start a worker: what it returns is unused)."""
        raise NotImplementedError

    def action_attach(self) -> None:
        row = self._run()
        if row is not None:
            outcome = run_actions.attach(row.run_dir, self.environment)
            run_actions.act(self.app, outcome, self._show_run_detail)

    def action_stop(self) -> None:
        """Stop the highlighted run's team — after asking (default No, asked once)."""
        row = self._run()
        if row is not None and self.is_active:
            run_dir = row.run_dir
            question = ask(
                ui_text(self),
                "app.ask.stop",
                "stop",
                run=row.run_id,
                task=row.task_key,
                lead=row.lead_status(),
            )
            on_yes(self, question, lambda: self._stop(run_dir))

    @work(thread=True, exclusive=True, group="stop-lead")
    def _stop(self, run_dir: Path) -> None:
        text = ui_text(self)
        self.app.call_from_thread(self._show_run_detail, text.get("app.runs.stopping"))
        outcome = run_actions.stop_lead(run_dir, self.environment, text)
        self.app.call_from_thread(self._show_run_detail, outcome.message)
        self.app.call_from_thread(self.load_runs)

    def action_resume(self) -> None:
        row = self._run()
        if row is not None:
            outcome = run_actions.resume(row.run_dir, self.environment, ui_text(self))
            run_actions.act(self.app, outcome, self._show_run_detail)
