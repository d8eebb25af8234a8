"""The start screen: this project's setups and runs, and whether the agent CLIs are ready.

Setups (resume, new, delete) and runs (status, attach, stop, resume) of the current
project; `a` shows every project's, `c` the doctor's detail. The runs and the one-line
doctor summary are read in worker threads after the first paint.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, Header, OptionList, Static

from okstra_core.display import age_since, inert_markup
from okstra_core.environment import Environment
from okstra_core.errors import OkstraError
from okstra_core.life.doctor import diagnose
from okstra_core.life.runs import RunRow, find_project_root
from okstra_core.setup_runs import setup_runs
from okstra_core.wizard.text import WizardText

from .. import run_actions
from ..messages import DeleteRequested, WizardChosen
from ..resources import ui_text
from ..widgets import OptionTable, Plain, Row
from .dialog import DeleteWizardScreen, ask, gone, on_yes, part, show_error
from .doctor import DoctorScreen

if TYPE_CHECKING:
    from okstra_core.life.doctor import Report
    from okstra_core.session import WizardSummary

NEW = "new"


def summary_task(summary: WizardSummary, text: WizardText) -> str:
    """The task column of a wizard: its task key, or that none was chosen yet."""
    task = summary.task or text.get("app.start.task_not_chosen")
    return text.get("app.start.legacy", task=task) if summary.legacy else task


def setup_state(summary: WizardSummary, text: WizardText) -> str:
    """Where a setup is: in progress (step n of ~m), launched as run …, or aborted.

    A setup that prepared a run names its newest; the step never shows past the
    estimated total (which grows as roles are added).
    """
    if summary.status == "aborted":
        return text.get("app.start.state.aborted")
    if summary.status == "broken":
        return text.get("app.start.unknown")
    launched = setup_runs(Path(summary.path)) if summary.status == "confirmed" else []
    if launched:
        return text.get("app.start.state.launched", run=launched[-1].get("runId") or "?")
    if summary.status == "confirmed":
        return text.get("app.start.state.confirmed")
    answered, total = summary.progress
    current = answered + 1
    return text.get("app.start.state.in_progress", current=current, total=max(total, current))


def summary_row(
    summary: WizardSummary, now: datetime, text: WizardText, *, project: bool = False
) -> Row:
    """One setup: task (after its project's name with `project`), type, state, age."""
    task = summary_task(summary, text)
    if project:
        task = f"{_project_name(getattr(summary, 'project_root', ''))}: {task}"
    kind = summary.task_type or text.get("app.start.unknown")
    cells = (task, kind, setup_state(summary, text), age_since(summary.updated_at, now))
    return Row(str(summary.path), cells, disabled_reason=summary.problem)


def default_choice(summaries: Sequence[WizardSummary]) -> str:
    """What Enter does first: resume the newest wizard in progress, else a new setup."""
    resumable = (s for s in summaries if s.status == "in-progress" and s.problem is None)
    return next((str(s.path) for s in resumable), NEW)


def _project_name(root: str | None) -> str:
    return Path(root).name if root else "?"


def in_project(summary: WizardSummary, roots: set[Path]) -> bool:
    """Whether a setup belongs to the current project (a broken one always shows)."""
    root = getattr(summary, "project_root", "")
    return not root or Path(root) in roots


# How much of a damaged run's reason its row shows (the whole reason shows below).
_WHY = 62


def run_row(row: RunRow, text: WizardText, *, project: bool = False) -> Row:
    """One run: id, task, lead status, age; a damaged one with why on a second line."""
    task = row.task_key
    if project:
        task = f"{_project_name(str(row.project_root))}: {task}"
    detail = None
    if row.lead is None and row.problem:
        # Without the run's own directory (shown below).
        why = row.problem.replace(f"{row.run_dir}/", "").replace("\n", " ")
        detail = f"✗ {why[:_WHY] + '…' if len(why) > _WHY + 1 else why}"
    cells = (row.run_id, task, run_actions.lead_label(row, text), run_actions.age(row))
    return Row(str(row.run_dir), cells, detail=detail)


def doctor_line(report: Report, text: WizardText) -> str:
    """`3 of 5 agent CLIs ready · tmux ok — c: details` (one line)."""
    ready, total = report.ready_count()
    parts = [text.get("app.start.doctor.ready", ready=ready, total=total)]
    logged_out = [
        c.name for c in report.providers if c.ok and not c.disabled and c.logged_in is False
    ]
    if logged_out:
        parts.append(text.get("app.start.doctor.logged_out", names=", ".join(logged_out)))
    # A CLI PATH found where the project can put one.
    unsafe = [c.name for c in report.checks if c.origin is not None and c.origin.risk]
    if unsafe:
        parts.append(text.get("app.start.doctor.unsafe_path", names=", ".join(unsafe)))
    tmux_ok = report.tmux is not None and report.tmux.ok
    parts.append(text.get("app.start.doctor.tmux_ok" if tmux_ok else "app.start.doctor.no_tmux"))
    return text.get("app.start.doctor.line", summary=" · ".join(parts))


class RunKeysScreen(Screen[None]):
    """Base of the screens that list runs, with their keys: attach, stop (after asking),
    resume the lead; a subclass gives `environment`, `project_root` (None: no project),
    `show_all` and the three hooks `_run`, `_show_run_detail` and `_show_runs`."""

    environment: Environment
    project_root: Path | None
    show_all: bool

    def _run(self) -> RunRow | None:
        """The highlighted run (None: none, or its table does not have the focus)."""
        raise NotImplementedError

    def _show_run_detail(self, message: str = "") -> None:
        """Show the highlighted run's status, and what an action said (`message`)."""
        raise NotImplementedError

    def _show_runs(self, rows: list[RunRow], error: str) -> None:
        """Show the runs read (or the error that kept them from being read)."""
        raise NotImplementedError

    @work(thread=True, exclusive=True, group="runs")
    def load_runs(self) -> None:
        """Read the runs again, in a worker (the screen's own, or every project's)."""
        rows, error = run_actions.read_runs(self.project_root, self.show_all, self.environment)
        self.app.call_from_thread(self._show_runs, rows, error)

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
            said = {"run": row.run_id, "task": row.task_key, "lead": row.lead_status()}
            question = ask(ui_text(self), "app.ask.stop", "stop", **said)
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


class StartScreen(RunKeysScreen):
    """This project's setups ("New setup" first) and runs, and the doctor's summary.

    Args:
        setups: the wizards `list_wizards` found, newest first (every project's).
        error: an error to show (a wizard that could not be opened or deleted).
        cwd: the directory the app was started in; None shows every project.
        environment: the app's; its clock reading now, for "last update".
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("d", "delete", "Delete"),
        Binding("a", "toggle_all", "All projects"),
        Binding("c", "doctor", "Check CLIs"),
        Binding("t", "attach", "Attach"),
        Binding("s", "stop", "Stop"),
        Binding("r", "resume", "Resume"),
    ]

    def __init__(
        self,
        setups: Sequence[WizardSummary],
        error: str,
        cwd: Path | None,
        environment: Environment,
    ) -> None:
        super().__init__()
        self.all_summaries = tuple(setups)
        self.now = environment.now()
        self.error = error
        self.environment = environment
        self.cwd = cwd
        self.project_root: Path | None = None
        if cwd is not None:
            try:
                self.project_root = find_project_root(cwd, environment.env)
            except OkstraError as exc:  # a refused `.okstra` above: said, never used
                self.error = self.error or inert_markup(exc.render())
        self.show_all = cwd is None
        self.runs: list[RunRow] = []
        self.runs_loaded = False
        self.doctor_text = ""
        self._note: tuple[str | None, str] | None = None

    def _roots(self) -> set[Path]:
        roots = {p for p in (self.cwd, self.project_root) if p is not None}
        return {p.resolve() for p in roots}

    @property
    def summaries(self) -> tuple[WizardSummary, ...]:
        """The setups in view: this project's, or every project's."""
        if self.show_all:
            return self.all_summaries
        roots = self._roots()
        return tuple(s for s in self.all_summaries if in_project(s, roots))

    def _where(self) -> str:
        text = ui_text(self)
        if self.show_all:
            return text.get("app.runs.all")
        root = self.project_root or self.cwd
        return root.name if root is not None else ""

    def _setup_rows(self) -> list[Row]:
        text = ui_text(self)
        rows = [Row(NEW, (text.get("app.start.new"), "", "", ""))]
        rows += [summary_row(s, self.now, text, project=self.show_all) for s in self.summaries]
        return rows

    def compose(self) -> ComposeResult:
        text = ui_text(self)
        yield Header()
        with Vertical(id="start"):
            yield Static(text.get("app.start.intro"), id="intro")
            command = self.environment.okstra_command()
            yield Plain(text.get("app.start.elsewhere", command=command), id="elsewhere")
            yield Plain(text.get("app.start.doctor.checking"), id="doctor")
            yield Plain(self._setups_title(), id="setups-title")
            header = [
                text.get(f"app.start.column.{c}") for c in ("task", "type", "progress", "updated")
            ]
            selected = default_choice(self.summaries)
            table = OptionTable(self._setup_rows(), selected=selected, header=header, id="wizards")
            yield Plain(table.header_text(), id="columns")
            yield table
            empty = "" if self.summaries else "-visible"
            yield Static(text.get("app.start.empty"), id="empty", classes=empty)
            yield Plain(text.get("app.runs.loading"), id="runs-title")
            header = [text.get(f"app.start.run_column.{c}") for c in ("run", "task", "lead", "age")]
            runs = OptionTable((), header=header, id="runs")
            yield Plain(runs.header_text(), id="run-columns")
            yield runs
            yield Static(text.get("app.runs.empty"), id="runs-empty")
            yield Plain("", id="run-detail")
            yield Plain(self.error, id="error", classes="-visible" if self.error else "")
        yield Footer()

    def _setups_title(self) -> str:
        return ui_text(self).get("app.start.setups", where=self._where())

    def on_mount(self) -> None:
        wizards = part(self, "#wizards", OptionTable)
        if wizards is not None:
            wizards.focus()
        # After the first paint: nothing may delay it.
        self.call_after_refresh(self.load_runs)
        self.call_after_refresh(self.check_clis)

    def on_option_table_layout_changed(self, message: OptionTable.LayoutChanged) -> None:
        target = part(self, "#columns" if message.table.id == "wizards" else "#run-columns", Plain)
        if target is not None:
            target.update(message.table.header_text())

    def show_error(self, message: str) -> None:
        show_error(self, message)

    def _fill(self, table_id: str, columns_id: str, rows: list[Row]) -> None:
        """Show `rows` in a table, the highlighted row kept, its headings laid out again."""
        table = self.query_one(table_id, OptionTable)
        table.set_rows(rows, selected=table.highlighted_value)
        table.on_resize()
        self.query_one(columns_id, Plain).update(table.header_text())

    def _show_runs(self, rows: list[RunRow], error: str) -> None:
        if gone(self):
            return  # a setup was opened before the runs were read
        text = ui_text(self)
        self.runs = rows
        self.runs_loaded = True
        self._fill("#runs", "#run-columns", [run_row(r, text, project=self.show_all) for r in rows])
        title = text.get("app.start.runs", count=len(rows), where=self._where())
        self.query_one("#runs-title", Plain).update(error or title)
        self.query_one("#start").set_class(not rows, "-no-runs")
        self._show_run_detail()

    @work(thread=True, exclusive=True, group="start-doctor")
    def check_clis(self) -> None:
        text = ui_text(self)
        try:
            report = diagnose(self.environment, cwd=self.cwd, fresh=False)
            line = doctor_line(report, text)
        except OkstraError as exc:
            line = exc.render()
        self.app.call_from_thread(self._show_doctor, line)

    def _show_doctor(self, line: str) -> None:
        self.doctor_text = line
        doctor = part(self, "#doctor", Plain)
        if doctor is not None:
            doctor.update(line)

    def _focused_value(self, selector: str) -> str | None:
        """The highlighted value of the table `selector` while it has the focus."""
        table = next(self.query(selector).results(OptionTable), None)
        return table.highlighted_value if table is not None and table.has_focus else None

    def _highlighted(self) -> WizardSummary | None:
        """The summary of the highlighted wizard (None on "New setup" or before compose)."""
        value = self._focused_value("#wizards")
        return next((s for s in self.summaries if str(s.path) == value), None)

    def _run(self) -> RunRow | None:
        """The highlighted run while the runs table has the focus."""
        value = self._focused_value("#runs")
        return next((r for r in self.runs if str(r.run_dir) == value), None)

    def _show_run_detail(self, message: str = "") -> None:
        if gone(self):
            return
        row = self._run()
        lines = run_actions.status_lines(row, ui_text(self)) if row is not None else []
        here = str(row.run_dir) if row is not None else None
        if message:
            # What an action said stays under its run until another run is highlighted.
            self._note = (here, message)
        elif self._note is not None and self._note[0] == here:
            message = self._note[1]
        if message:
            lines.append(message)
        self.query_one("#run-detail", Plain).update("\n".join(lines))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Actions show in the footer only where they apply.
        if action == "delete":
            return self._highlighted() is not None
        if action in ("attach", "stop", "resume"):
            return self._run() is not None
        return True

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self.refresh_bindings()
        if event.option_list.id == "runs":
            self._show_run_detail()

    def on_descendant_focus(self) -> None:
        self.refresh_bindings()
        self._show_run_detail()

    def action_delete(self) -> None:
        summary = self._highlighted()
        if summary is None or not self.is_active:
            return  # a second `d` while the first dialog opens: one dialog
        path = Path(summary.path)
        question = DeleteWizardScreen(summary_task(summary, ui_text(self)), path)
        on_yes(self, question, lambda: self.post_message(DeleteRequested(path)))

    def action_toggle_all(self) -> None:
        if self.cwd is None or gone(self):
            return
        self.show_all = not self.show_all
        self._fill("#wizards", "#columns", self._setup_rows())
        self.query_one("#setups-title", Plain).update(self._setups_title())
        self.query_one("#empty", Static).set_class(not self.summaries, "-visible")
        self.query_one("#runs-title", Plain).update(ui_text(self).get("app.runs.loading"))
        self.load_runs()

    def action_doctor(self) -> None:
        if not self.is_active:
            return  # a second `c` while the first dialog opens: one dialog
        self.app.push_screen(DoctorScreen(self.environment, cwd=self.cwd))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option_list.id == "runs":
            # Enter on a run: its status, looked at again (an exit is recorded now).
            self.load_runs()
            return
        value = event.option.id
        self.post_message(WizardChosen(None if value == NEW else Path(str(value))))
