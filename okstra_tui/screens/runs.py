"""The runs screen: this project's runs (all projects with `a`), their lead, their team.

The runs are read, and the highlighted run's team looked at twice a second, in worker
threads; the UI thread only writes the cells that changed. On the runs table `t`
attaches, `s` stops the team, `r` resumes the lead; on the members table (Tab) `a`
attaches to the member, `s` stops it, `f` sends an ended worker a follow-up.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import DataTable, Footer, Header

from .. import run_actions
from ..resources import ui_text
from ..team_view import COLUMNS, MemberRow, TeamLook, table_diff, team_of
from ..widgets import Plain, line
from .dialog import SendScreen, ask, close, gone, on_yes, part
from .start import RunKeysScreen

# Half a second: a change in the team shows within a second, the look's time included.
TEAM_REFRESH_SECONDS = 0.5

if TYPE_CHECKING:
    from okstra_core.environment import Environment
    from okstra_core.life.runs import RunRow


def apply_rows(
    table: DataTable[Text], shown: dict[str, tuple[str, ...]], rows: tuple[MemberRow, ...]
) -> bool:
    """Make `table` (showing `shown`, updated here) show `rows`, writing only what changed;
    whether anything changed."""
    diff = table_diff(shown, rows)
    if diff.empty:
        return False
    if diff.rebuild:
        table.clear()
        shown.clear()
        diff = table_diff(shown, rows)
    for key in diff.remove:
        table.remove_row(key)
        del shown[key]
    for key, column, cell in diff.update:
        table.update_cell(key, COLUMNS[column], Text(cell), update_width=True)
    for row in diff.add:
        table.add_row(*(Text(cell) for cell in row.cells), key=row.key)
    for row in rows:
        shown[row.key] = row.cells
    return True


class RunsScreen(RunKeysScreen):
    """Runs, newest first, with the lead's status, of `project_root` (None: every
    project's); the cursor goes to the run `select` once the runs are read."""

    # `a` and `s` act on the table that has the focus (`check_action`).
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Back"),
        Binding("a", "toggle_all", "All projects"),
        Binding("t", "attach", "Attach"),
        Binding("s", "stop", "Stop"),
        Binding("r", "resume", "Resume"),
        Binding("a", "attach_member", "Attach"),
        Binding("s", "stop_member", "Stop"),
        Binding("f", "send_member", "Follow-up"),
    ]
    MEMBER_ACTIONS = frozenset({"attach_member", "stop_member", "send_member"})
    RUN_ACTIONS = frozenset({"toggle_all", "attach", "stop"})

    def __init__(
        self, project_root: Path | None, environment: Environment, *, select: Path | None = None
    ) -> None:
        super().__init__()
        self.project_root = project_root
        self.environment = environment
        self.select = select
        self.show_all = project_root is None
        self.rows: list[RunRow] = []
        # The members table's rows as shown, its members, the highlighted one, what the
        # team's labels show, and how many looks changed the table.
        self.member_cells: dict[str, tuple[str, ...]] = {}
        self.members: dict[str, MemberRow] = {}
        self.member_key: str | None = None
        self.shown: dict[str, str] = {}
        self.team_revision = 0

    def compose(self) -> ComposeResult:
        text = ui_text(self)
        yield Header()
        with Vertical(id="runs"):
            yield Plain(text.get("app.runs.loading"), id="title")
            table: DataTable[str] = DataTable(id="table", cursor_type="row", zebra_stripes=True)
            yield table
            yield Plain("", id="detail")
            yield Plain("", id="team")
            members: DataTable[Text] = DataTable(id="members", cursor_type="row")
            yield members
            yield Plain("", id="preview-title")
            yield Plain("", id="preview")
        # Its keys fill 80 columns: no room for the palette's (listed by `?`).
        yield Footer(show_command_palette=False)

    def on_mount(self) -> None:
        table = self.query_one("#table", DataTable)
        for key in ("run", "task", "type", "team", "backend", "lead", "age"):
            table.add_column(ui_text(self).get(f"app.runs.{key}"), key=key)
        members = self.query_one("#members", DataTable)
        for key in COLUMNS:
            members.add_column(ui_text(self).get(f"app.team.{key}"), key=key)
        table.focus()
        self.load_runs()
        self.set_interval(TEAM_REFRESH_SECONDS, self.load_team)

    def _show_runs(self, rows: list[RunRow], error: str) -> None:
        if gone(self):
            return  # closed before the runs were read
        text = ui_text(self)
        self.rows = rows
        table = self.query_one("#table", DataTable)
        table.clear()
        for row in rows:
            cells = (
                row.run_id,
                row.task_key,
                row.task_type,
                str(row.team_size or "?"),
                row.backend or "-",
                run_actions.lead_label(row, text),
                run_actions.age(row),
            )
            # A str cell would be read as markup: each is a Text of the inert value.
            table.add_row(*(Text(line(cell)) for cell in cells), key=str(row.run_dir))
        runs = [str(row.run_dir) for row in rows]
        if self.select is not None and str(self.select) in runs:
            table.move_cursor(row=runs.index(str(self.select)))
        where = text.get("app.runs.all") if self.show_all else str(self.project_root)
        title = text.get("app.runs.title", where=where, count=len(rows))
        self.query_one("#title", Plain).update(error or title)
        self._show_run_detail()

    def _run(self) -> RunRow | None:
        table = part(self, "#table", DataTable)
        if table is None or table.cursor_row is None or table.cursor_row >= len(self.rows):
            return None
        return self.rows[table.cursor_row]

    def _show_run_detail(self, message: str = "") -> None:
        if gone(self):
            return  # a stop's outcome after the screen was closed
        row = self._run()
        text = ui_text(self)
        if row is None:
            self.query_one("#detail", Plain).update(message or text.get("app.runs.empty"))
            return
        lines = run_actions.status_lines(row, text)
        lines.insert(1, str(row.run_dir))
        if message:
            lines.append(message)
        self.query_one("#detail", Plain).update("\n".join(lines))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "members":
            self.member_key = event.row_key.value
        else:
            self._show_run_detail()
        self.load_team()

    @work(thread=True, exclusive=True, group="team")
    def load_team(self) -> None:
        """Look at the highlighted run's team (off the UI thread)."""
        row = self._run()
        look = TeamLook()
        if row is not None:
            look = team_of(row, self.environment, ui_text(self), self.member_key)
        self.app.call_from_thread(self._show_team, row.run_dir if row else None, look)

    def _show_team(self, run_dir: Path | None, look: TeamLook) -> None:
        table = part(self, "#members", DataTable)
        row = self._run()
        if table is None or (row.run_dir if row else None) != run_dir:
            return  # closed, or another run highlighted since
        self.members = {member.key: member for member in look.rows}
        if apply_rows(table, self.member_cells, look.rows):
            self.team_revision += 1
        for selector, shown in (
            ("#team", look.title),
            ("#preview-title", look.preview_title),
            ("#preview", "\n".join(look.preview)),
        ):
            widget = part(self, selector, Plain)
            if widget is not None and self.shown.get(selector) != shown:
                self.shown[selector] = shown
                widget.update(shown)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The members table's keys while it has the focus, the runs table's otherwise."""
        on_members = isinstance(self.focused, DataTable) and self.focused.id == "members"
        if action in self.MEMBER_ACTIONS:
            return on_members
        return not (action in self.RUN_ACTIONS and on_members)

    def on_descendant_focus(self) -> None:
        self.refresh_bindings()

    def action_close(self) -> None:
        close(self)

    def action_toggle_all(self) -> None:
        if self.project_root is None:
            return
        self.show_all = not self.show_all
        self.load_runs()

    def _member(self) -> tuple[RunRow, MemberRow] | None:
        row = self._run()
        member = self.members.get(self.member_key or "")
        if member is None:
            member = next((m for m in self.members.values() if m.leader), None)
        return (row, member) if row is not None and member is not None else None

    def action_attach_member(self) -> None:
        """Show the member's tmux pane (the lead's window for the lead)."""
        chosen = self._member()
        if chosen is not None:
            run_dir, member = chosen[0].run_dir, chosen[1]
            if member.leader:
                outcome = run_actions.attach(run_dir, self.environment)
            else:
                outcome = run_actions.attach_worker(run_dir, member.short, self.environment)
            run_actions.act(self.app, outcome, self._show_run_detail)

    def action_stop_member(self) -> None:
        """Stop the member — after asking (default No): a worker alone, or the lead alone."""
        chosen = self._member()
        if chosen is None or not self.is_active:
            return
        row, member = chosen
        key = "app.team.stop_lead" if member.leader else "app.team.stop_worker"
        question = ask(ui_text(self), key, "stop", who=member.short, run=row.run_id)
        on_yes(self, question, lambda: self._stop_member(row.run_dir, member))

    @work(thread=True, group="member-stop")
    def _stop_member(self, run_dir: Path, member: MemberRow) -> None:
        text = ui_text(self)
        said = text.get("app.team.stopping", who=member.short)
        self.app.call_from_thread(self._show_run_detail, said)
        if member.leader:
            outcome = run_actions.stop_lead_only(run_dir, self.environment, text)
        else:
            outcome = run_actions.stop_worker(run_dir, member.short, self.environment, text)
        self.app.call_from_thread(self._show_run_detail, outcome.message)
        self.app.call_from_thread(self.load_team)

    def action_send_member(self) -> None:
        """Ask for a follow-up for the member (the core says why not, shown inline)."""
        chosen = self._member()
        if chosen is None or not self.is_active:
            return
        row, member = chosen

        def answered(prompt: str | None) -> None:
            if prompt:
                self._send_member(row.run_dir, member.short, prompt)

        self.app.push_screen(SendScreen(member.short), answered)

    @work(thread=True, group="member-send")
    def _send_member(self, run_dir: Path, who: str, prompt: str) -> None:
        text = ui_text(self)
        outcome = run_actions.send_worker(run_dir, who, prompt, self.environment, text)
        self.app.call_from_thread(self._show_run_detail, outcome.message)
        self.app.call_from_thread(self.load_team)
