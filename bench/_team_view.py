"""(l) The app's live team view: one refresh of a 50-member team, on the UI thread.

The runs screen looks at the team in a worker thread twice a second; the UI thread
gets the look (plain rows) and applies it to the members table. That UI-thread part
is the subject: `RunsScreen._show_team` with a look of 50 members, then the app left
to process and paint (`pilot.pause()`), timed by the CPU time of the UI thread
(`time.thread_time`: the look's own thread is not in it, nor waiting for a core).
The screen is the real one, in the real app, headless at 120x40; its own look and
the runs' reading are switched off, so only the refreshes the bench gives it run.

Each refresh changes what a running team changes in a second: every member's
elapsed time, the activity of 5 of them and the last line of 10, and the preview of
the highlighted member. The baseline is a bare Textual app with a `DataTable` of the
same 50 rows and 7 columns (as tall as okstra's: the same rows painted) and a
`Static` below it, updated the same way: the same
`update_cell` calls (`update_width=True`, as okstra's) and the same preview update.
Bar: ≤ 50 ms of UI-thread time per refresh.

Sessions alternate (okstra, bare, bare, okstra, …); each runs `REFRESHES` refreshes.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from ._harness import Figure, NotAvailable, Stats

SIZE = (120, 40)
MEMBERS = 50
REFRESHES = 20
BAR_SECONDS = 0.050


def _looks() -> list[Any]:
    """`REFRESHES + 1` looks of a team of 50 (a lead, 49 workers), one second apart."""
    from okstra_core.life.workers.observe import WorkerState
    from okstra_tui.team_view import TeamLook, member_row

    activities = ("running", "waiting for input", "idle", "stalled")
    looks = []
    for second in range(REFRESHES + 1):
        rows = []
        for n in range(MEMBERS):
            role = "leader" if n == 0 else "analyser"
            state = WorkerState(
                role_execution_ref=f"role-exec-{role}-{n:03d}",
                participant_ref=f"participant-{n:03d}",
                label=f"{role}#{n or 1}",
                short=f"{role}#{n or 1}",
                role=role,
                provider="claude",
                model_ref="claude/opus-4.6",
                leader=n == 0,
                access="read-only",
                surface="tmux",
                state="running",
                status="running",
                started_at="2026-01-15T09:00:00+00:00",
                elapsed_seconds=60 * n + second,
                activity=activities[(n + second // 4) % 4 if n % 10 == 0 else 0],
                last_line=f"step {second if n % 5 == 0 else 0} of member {n}",
            )
            rows.append(member_row(state))
        preview = tuple(f"line {second + i} of the highlighted member" for i in range(8))
        looks.append(
            TeamLook(
                rows=tuple(rows),
                title=f"The team ({MEMBERS})",
                preview_title="analyser#1 — its output log:",
                preview=preview,
            )
        )
    return looks


async def _okstra(looks: list[Any], work: Path) -> list[float]:
    try:
        from okstra_core.environment import Environment
        from okstra_tui.app import make_app
        from okstra_tui.screens.runs import RunsScreen
    except ImportError as exc:
        raise NotAvailable(f"okstra_tui not importable: {exc}") from None

    app = make_app(project_root=work, host="terminal", environment=Environment.real())
    run = SimpleNamespace(run_dir=work / "run", problem=None, lead=None)
    spans: list[float] = []
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = RunsScreen(work, app.environment)
        # Only the bench's refreshes: no reading of runs, no look of its own.
        screen.load_runs = lambda: None  # type: ignore[method-assign]
        screen.load_team = lambda: None  # type: ignore[method-assign]
        screen._run = lambda: run  # type: ignore[method-assign]
        app.push_screen(screen)
        await pilot.pause()
        screen._show_team(run.run_dir, looks[0])  # the first look fills the table
        await pilot.pause()
        if len(screen.member_cells) != MEMBERS:
            raise NotAvailable(f"the members table shows {len(screen.member_cells)} rows")
        for look in looks[1:]:
            t0 = time.thread_time()
            screen._show_team(run.run_dir, look)
            await pilot.pause()
            spans.append(time.thread_time() - t0)
    return spans


async def _bare(looks: list[Any]) -> list[float]:
    from rich.text import Text
    from textual.app import App, ComposeResult
    from textual.widgets import DataTable, Footer, Header, Static

    from okstra_tui.team_view import COLUMNS, table_diff

    class Bare(App[None]):
        # As tall as okstra's members table (screens/runs.tcss): the same rows painted.
        CSS = "#members { height: auto; max-height: 12; }"

        def compose(self) -> ComposeResult:
            yield Header()
            yield DataTable(id="members", cursor_type="row")
            yield Static("", id="preview")
            yield Footer()

    # The same cell updates okstra's screen makes, worked out before the clock runs.
    updates = []
    shown = {row.key: row.cells for row in looks[0].rows}
    for look in looks[1:]:
        updates.append(table_diff(shown, look.rows).update)
        shown = {row.key: row.cells for row in look.rows}
    app = Bare()
    spans: list[float] = []
    async with app.run_test(size=SIZE) as pilot:
        table: DataTable[Text] = app.query_one(DataTable)
        for key in COLUMNS:
            table.add_column(key, key=key)
        for row in looks[0].rows:
            table.add_row(*(Text(cell) for cell in row.cells), key=row.key)
        preview = app.query_one("#preview", Static)
        await pilot.pause()
        for look, changed in zip(looks[1:], updates, strict=True):
            t0 = time.thread_time()
            for key, column, cell in changed:
                table.update_cell(key, COLUMNS[column], Text(cell), update_width=True)
            preview.update("\n".join(look.preview))
            await pilot.pause()
            spans.append(time.thread_time() - t0)
    return spans


def measure(work: Path, repeat: int) -> list[Figure]:
    name = "(l) runs screen: one refresh of 50 members, UI-thread CPU"
    baseline_name = "bare Textual DataTable of 50 rows, same updates"
    work.mkdir(parents=True, exist_ok=True)
    sessions = max(3, repeat // 3)
    try:
        looks = _looks()
        asyncio.run(_okstra(looks, work))  # warm-up: imports, CSS
        asyncio.run(_bare(looks))
        subject: list[float] = []
        baseline: list[float] = []
        pairs: list[float] = []
        for i in range(sessions):
            order = ("okstra", "bare") if i % 2 == 0 else ("bare", "okstra")
            got: dict[str, list[float]] = {}
            for who in order:
                gc.collect()
                got[who] = asyncio.run(_okstra(looks, work) if who == "okstra" else _bare(looks))
            subject += got["okstra"]
            baseline += got["bare"]
            pairs.append(statistics.median(got["okstra"]) / statistics.median(got["bare"]))
    except NotAvailable as exc:
        return [Figure(name, baseline_name=baseline_name, missing=str(exc))]
    s, b = Stats(tuple(subject)), Stats(tuple(baseline))
    verdict = "✓" if s.p95 <= BAR_SECONDS else "✗"
    note = (
        f"{sessions} sessions × {REFRESHES} refreshes; pairs {statistics.median(pairs):.2f}× "
        f"({min(pairs):.2f}–{max(pairs):.2f}×); bar p95 ≤ 50 ms {verdict}"
    )
    return [Figure(name, subject=s, baseline=b, baseline_name=baseline_name, note=note)]
