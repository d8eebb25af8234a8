"""The runs screen: this project's runs (all projects with `a`), their lead, actions.

Opened from the command palette. Reading the runs looks at each lead (tmux pane or
process), which records an exit the first time it is seen — in a worker thread, so
the screen never waits on tmux. Enter shows a run's status; `t` shows the lead's tmux
window, `s` stops the lead, `r` resumes it in this terminal (the app exits first).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from okstra_core.errors import OkstraError

from ..resources import stylesheet, ui_text


class RunsScreen(Screen[None]):
    """Runs, newest first, with the lead's status.

    Args:
        project_root: the project whose runs are listed (None: every project's).
        environment: the okstra Environment (tmux, clock).
    """

    CSS_PATH = stylesheet("runs")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Back"),
        Binding("a", "toggle_all", "All projects"),
        Binding("t", "attach", "Attach"),
        Binding("s", "stop", "Stop"),
        Binding("r", "resume", "Resume"),
    ]

    def __init__(self, project_root: Path | None, environment: Any) -> None:
        super().__init__()
        self.project_root = project_root
        self.environment = environment
        self.show_all = project_root is None
        self.rows: list[dict[str, Any]] = []

    def compose(self) -> ComposeResult:
        text = ui_text(self)
        yield Header()
        with Vertical(id="runs"):
            yield Static(text.get("app.runs.loading"), id="title", markup=False)
            table: DataTable[str] = DataTable(id="table", cursor_type="row", zebra_stripes=True)
            yield table
            yield Static("", id="detail", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#table", DataTable)
        for key in ("run", "task", "type", "team", "backend", "lead", "age"):
            table.add_column(ui_text(self).get(f"app.runs.{key}"), key=key)
        table.focus()
        self.load()

    @work(thread=True, exclusive=True, group="runs")
    def load(self) -> None:
        from okstra_core.runs import all_runs, project_runs

        now = self.environment.now()
        try:
            if self.show_all or self.project_root is None:
                rows = all_runs(self.environment)
            else:
                rows = project_runs(self.project_root, self.environment)
            payload = [row.to_json(now) for row in rows]
            error = ""
        except OkstraError as exc:
            payload, error = [], exc.render()
        self.app.call_from_thread(self._show_rows, payload, error)

    def _show_rows(self, rows: list[dict[str, Any]], error: str) -> None:
        from okstra_core.runs import human_age

        text = ui_text(self)
        self.rows = rows
        table = self.query_one("#table", DataTable)
        table.clear()
        for row in rows:
            table.add_row(
                row["runId"],
                row["taskKey"],
                row["taskType"],
                str(row["teamSize"] or "?"),
                row["backend"] or "-",
                row["leadStatus"],
                human_age(row["ageSeconds"]),
                key=row["runDir"],
            )
        where = text.get("app.runs.all") if self.show_all else str(self.project_root)
        title = text.get("app.runs.title", where=where, count=len(rows))
        self.query_one("#title", Static).update(error or title)
        self._show_detail()

    def _selected(self) -> dict[str, Any] | None:
        table = self.query_one("#table", DataTable)
        if not self.rows or table.cursor_row is None or table.cursor_row >= len(self.rows):
            return None
        return self.rows[table.cursor_row]

    def _show_detail(self, message: str = "") -> None:
        row = self._selected()
        text = ui_text(self)
        if row is None:
            self.query_one("#detail", Static).update(message or text.get("app.runs.empty"))
            return
        lead = row["lead"] or {}
        lines = [
            text.get("app.runs.detail", run=row["run"], status=row["leadStatus"]),
            row["runDir"],
            text.get("app.runs.resume", command=row["resumeCommand"] or "-"),
        ]
        if lead.get("detail") or row.get("problem"):
            lines.append(str(lead.get("detail") or row.get("problem")))
        if message:
            lines.append(message)
        self.query_one("#detail", Static).update("\n".join(lines))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail()

    def action_close(self) -> None:
        self.app.pop_screen()

    def action_toggle_all(self) -> None:
        if self.project_root is None:
            return
        self.show_all = not self.show_all
        self.load()

    def _run_info(self) -> Any | None:
        from okstra_core.lead import read_run

        row = self._selected()
        if row is None:
            return None
        try:
            return read_run(Path(row["runDir"]))
        except OkstraError as exc:
            self._show_detail(exc.render())
            return None

    def action_attach(self) -> None:
        import subprocess

        from okstra_core.lead import plan_attach

        from ..app import LaunchRequest

        run = self._run_info()
        if run is None:
            return
        plan = plan_attach(run, self.environment)
        if plan.argv is None:
            self._show_detail(plan.problem or "")
            return
        if plan.switch:
            done = subprocess.run(list(plan.argv), capture_output=True, text=True, check=False)
            self._show_detail(done.stderr.strip())
            return
        self.app.exit(LaunchRequest(tuple(plan.argv), run.run_dir, plan.env))

    @work(thread=True, exclusive=True, group="runs")
    def action_stop(self) -> None:
        from okstra_core.lead import read_run, stop

        row = self._selected()
        if row is None:
            return
        try:
            outcome = stop(read_run(Path(row["runDir"])), self.environment)
            message = ui_text(self).get("app.runs.stopped", status=outcome.after.label())
        except OkstraError as exc:
            message = exc.render()
        self.app.call_from_thread(self._show_detail, message)
        self.load()

    def action_resume(self) -> None:
        from okstra_core.launch import read_resume_sheet

        from ..app import LaunchRequest

        run = self._run_info()
        if run is None:
            return
        try:
            lead = read_resume_sheet(run.run_dir).lead()
        except OkstraError as exc:
            self._show_detail(exc.render())
            return
        if lead is None or lead.resume_argv is None:
            self._show_detail(ui_text(self).get("app.runs.no_resume", run=run.ref))
            return
        env = {**self.environment.env, **lead.env}
        self.app.exit(LaunchRequest(tuple(lead.resume_argv), lead.cwd, env))
