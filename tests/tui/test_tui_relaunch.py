"""A setup that already launched opens its run; launching another run is a decision."""

from __future__ import annotations

from textual.widgets import Static
from tui_support import prefill, settle, wait_armed, wait_for

from okstra_core.environment import Environment
from okstra_core.frontend import prepare_setup
from okstra_core.session import Wizard
from okstra_tui.screens.dialog import RelaunchScreen
from okstra_tui.screens.launch import LaunchScreen
from okstra_tui.screens.runs import RunsScreen

SIZE = (100, 40)


async def test_launching_a_launched_setup_again_is_a_decision(app_factory, project) -> None:
    path = prefill(project, "confirm")
    Wizard.open(path).submit("confirm")
    first = prepare_setup(path, launch="none", environment=Environment.real())
    runs = project / ".okstra" / "tasks" / "grp" / "one" / "runs"
    app = app_factory(state=path, launch="none")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert isinstance(app.screen, LaunchScreen) and app.screen.waiting
        # The screen says what became of the earlier run (its lead was never launched).
        earlier = str(app.screen.query_one("#earlier", Static).render())
        assert first.run_id in earlier and "prepared" in earlier and "okstra attach" in earlier
        await wait_armed(pilot, app)  # keys typed before that are dropped
        # The default action (Enter) opens the run it launched, selected, with its actions.
        await pilot.press("enter")
        await wait_for(pilot, app, lambda: isinstance(app.screen, RunsScreen), "the runs")
        runs_screen = app.screen
        await wait_for(pilot, app, lambda: bool(runs_screen.rows), "the runs read")
        selected = runs_screen._run()
        assert selected is not None and selected.run_dir == first.run_dir
        assert [p.name for p in runs.iterdir()] == [first.run_id]  # nothing prepared
        await pilot.press("escape")
        await wait_for(pilot, app, lambda: isinstance(app.screen, LaunchScreen), "back")
        await wait_armed(pilot, app)
        # Another run is a deliberate key, and a question.
        await pilot.press("l")
        await wait_for(pilot, app, lambda: isinstance(app.screen, RelaunchScreen), "the question")
        question = app.screen
        assert (
            question.values["run_id"] == first.run_id
            and question.values["run_dir"] == first.run_dir
        )
        # Enter on the dialog is "Not now" (it has the focus): nothing is prepared.
        await pilot.press("enter")
        await settle(pilot, app)
        assert isinstance(app.screen, LaunchScreen) and app.screen.waiting
        assert [p.name for p in runs.iterdir()] == [first.run_id]
        await pilot.press("l")
        await wait_for(pilot, app, lambda: isinstance(app.screen, RelaunchScreen), "the question")
        await pilot.press("y")
        await wait_for(
            pilot,
            app,
            lambda: isinstance(app.screen, LaunchScreen) and app.screen.finished,
            "the second run",
        )
        assert not app.screen.failed
        assert sorted(p.name for p in runs.iterdir())[-1].endswith("-002")
