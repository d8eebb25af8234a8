"""The team of the run highlighted on the runs screen: one row per member, and a preview.

Read in a worker thread: the team as `team_status` sees it (which records the end of a
worker nobody saw end), the lead's state and activity from its pane, and the selected
member's last lines. Every value comes back inert; the screen applies only what changed
(`table_diff`).
"""

from __future__ import annotations

from okstra_core.display import age, inert, words_of
from okstra_core.environment import Environment
from okstra_core.errors import OkstraError
from okstra_core.life.actions import team_status
from okstra_core.life.activity import lead_activity
from okstra_core.life.lead import observe, read_run
from okstra_core.life.runs import RunRow
from okstra_core.life.workers import files
from okstra_core.life.workers.observe import WorkerState
from okstra_core.records import dataclass
from okstra_core.wizard.text import WizardText

PREVIEW_LINES = 8
# The members table's columns, by text key (`app.team.<key>`).
COLUMNS = ("member", "model", "access", "state", "activity", "elapsed", "last")


@dataclass(frozen=True)
class MemberRow:
    """One member as the table shows it: its key (role execution) and its cells."""

    key: str
    short: str
    leader: bool
    ended: bool
    tmux: bool
    cells: tuple[str, ...]


@dataclass(frozen=True)
class TeamLook:
    """One look at a run's team: its rows, and the preview of the selected member."""

    rows: tuple[MemberRow, ...] = ()
    title: str = ""
    preview_title: str = ""
    preview: tuple[str, ...] = ()


def _last(lines: list[str]) -> str:
    said = words_of(lines, 1)
    return said[-1].strip() if said else ""


def member_row(
    state: WorkerState, *, shown: str | None = None, activity: str | None = None, last: str = ""
) -> MemberRow:
    """The row of one member; `shown`/`activity`/`last` replace the recorded ones."""
    values = (
        state.short,
        state.model_ref or "-",
        state.access or "-",
        shown if shown is not None else state.status,
        activity or state.activity or "-",
        age(state.elapsed_seconds) if state.started_at else "-",
        last or state.last_line or "",
    )
    cells = tuple(inert(cell) for cell in values)
    tmux = state.surface == "tmux"
    return MemberRow(state.role_execution_ref, state.short, state.leader, state.ended, tmux, cells)


def team_of(
    row: RunRow, environment: Environment, text: WizardText, selected: str | None = None
) -> TeamLook:
    """The team of a runs-screen row now (nothing for a damaged run), and the last lines
    of the `selected` member (the lead when None or gone)."""
    if row.problem and row.lead is None:
        return TeamLook()
    run_dir = row.run_dir
    try:
        run = read_run(run_dir)
        lead = observe(run, environment)
        team = team_status(run_dir, environment).workers
    except OkstraError as exc:
        return TeamLook(title=inert(exc.render()))
    activity = lead_activity(run, environment) if lead.alive else None
    pane = list(activity.lines) if activity is not None else []
    now = activity.state if activity is not None else None
    rows = tuple(
        member_row(state, shown=lead.label(), activity=now, last=_last(pane))
        if state.leader
        else member_row(state)
        for state in team
    )
    chosen = next((r for r in rows if r.key == selected), None) or next(
        (r for r in rows if r.leader), None
    )
    title = text.get("app.team.title", count=len(rows))
    if chosen is None:
        return TeamLook(rows=rows, title=title)
    if chosen.leader:
        lines = pane[-PREVIEW_LINES:]
        where = text.get("app.team.preview_pane" if pane else "app.team.preview_none")
    else:
        lines = files.tail_lines(run_dir, chosen.key, PREVIEW_LINES)
        where = text.get("app.team.preview_log")
    preview_title = text.get("app.team.preview", who=inert(chosen.short), where=where)
    return TeamLook(rows, title, preview_title, tuple(inert(line) for line in lines))


@dataclass(frozen=True)
class TableDiff:
    """What to change in a table to show new rows (`rebuild`: the order changed)."""

    remove: tuple[str, ...] = ()
    update: tuple[tuple[str, int, str], ...] = ()
    add: tuple[MemberRow, ...] = ()
    rebuild: bool = False

    @property
    def empty(self) -> bool:
        return not (self.remove or self.update or self.add or self.rebuild)


def table_diff(before: dict[str, tuple[str, ...]], after: tuple[MemberRow, ...]) -> TableDiff:
    """The least change from the rows shown (`before`, in order) to `after` (members are
    only ever appended: a kept member keeps its place, else the table is rebuilt)."""
    wanted = {row.key: row for row in after}
    remove = tuple(key for key in before if key not in wanted)
    kept = [key for key in before if key in wanted]
    if kept != [row.key for row in after[: len(kept)]]:
        return TableDiff(rebuild=True)
    update = tuple(
        (key, column, cell)
        for key in kept
        for column, (old, cell) in enumerate(zip(before[key], wanted[key].cells, strict=True))
        if old != cell
    )
    return TableDiff(remove=remove, update=update, add=after[len(kept) :])
