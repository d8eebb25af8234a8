"""The runs screen and the doctor dialog, opened from the command palette."""

from __future__ import annotations

from textual.widgets import DataTable, Static
from tui_support import settle, wait_for

from okstra_core.cli.roleargs import request_from_argv
from okstra_core.environment import Environment
from okstra_core.prepare import prepare
from okstra_tui.screens.doctor import DoctorScreen
from okstra_tui.screens.runs import RunsScreen

SIZE = (120, 40)


async def test_runs_screen_lists_the_project_runs(app_factory, project) -> None:
    argv = [
        "--project-root", str(project), "--task-group", "perf", "--task-id", "widget",
        "--task-type", "requirements-discovery", "--brief", "brief.md", "--host", "terminal",
    ]  # fmt: skip
    env = Environment.real()
    first = prepare(request_from_argv(argv, env), launch="none", environment=env)
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        app.show_runs()
        await wait_for(pilot, app, lambda: isinstance(app.screen, RunsScreen), "runs screen")
        screen = app.screen
        await wait_for(pilot, app, lambda: bool(screen.rows), "the runs read")
        table = screen.query_one("#table", DataTable)
        assert table.row_count == 1
        cells = [str(cell) for cell in table.get_row_at(0)]  # each a Text
        assert cells[:2] == [first.run_id, "perf/widget"]
        assert cells[5] == "prepared"
        detail = str(screen.query_one("#detail", Static).render())
        assert "okstra resume" in detail and str(first.run_dir) in detail
        # No tmux window to show: said inline, the app stays.
        await pilot.press("t")
        await settle(pilot, app)
        assert "never launched" in str(screen.query_one("#detail", Static).render())
        await pilot.press("escape")
        await settle(pilot, app)
        assert not isinstance(app.screen, RunsScreen)


async def test_doctor_dialog_shows_the_summary(app_factory) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        app.show_doctor()
        await wait_for(pilot, app, lambda: isinstance(app.screen, DoctorScreen), "doctor")
        await settle(pilot, app)
        summary = app.screen.query_one("#summary", Static)
        await wait_for(
            pilot, app, lambda: "agent CLIs ready" in str(summary.render()), "the summary"
        )
        report = str(app.screen.query_one("#report", Static).render())
        assert "claude" in report and "tmux" in report
        await pilot.press("escape")
        await settle(pilot, app)
        assert not isinstance(app.screen, DoctorScreen)
