"""The app asks once before the first launch in a project not trusted yet."""

from __future__ import annotations

from pathlib import Path

from tui_support import drive_to, prefill, settle, wait_armed, wait_for

from okstra_core import trust
from okstra_tui.app import LaunchRequest
from okstra_tui.screens.dialog import TrustScreen
from okstra_tui.screens.launch import LaunchScreen
from tests.conftest import untrusted

SIZE = (100, 40)


async def test_a_first_launch_asks_to_trust_the_project(app_factory, project, monkeypatch) -> None:
    untrusted(monkeypatch)
    runs = project / ".okstra" / "tasks" / "grp" / "one" / "runs"
    state = prefill(project, "confirm")
    app = app_factory(launch="exec", state=state)
    async with app.run_test(size=SIZE) as pilot:
        await drive_to(pilot, app, "confirm")
        await pilot.click("#do-confirm")
        await wait_for(pilot, app, lambda: isinstance(app.screen, TrustScreen), "the question")
        assert app.screen.values["project"] == project
        # Enter is "Not now" (it has the focus): nothing is prepared, nothing trusted.
        await pilot.press("enter")
        await wait_for(
            pilot,
            app,
            lambda: isinstance(app.screen, LaunchScreen) and app.screen.failed,
            "the refusal",
        )
        await settle(pilot, app)
        assert not runs.exists() or not any(runs.iterdir())
        assert not trust.verdict(project).trusted
    # Asked again, yes: the project is trusted (once, for good) and the lead launched.
    app = app_factory(launch="exec", state=state)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert isinstance(app.screen, LaunchScreen) and app.screen.waiting
        await wait_armed(pilot, app)
        await pilot.press("enter")
        await wait_for(pilot, app, lambda: isinstance(app.screen, TrustScreen), "the question")
        await pilot.press("y")
        await wait_for(pilot, app, lambda: app.return_value is not None, "the app to exit")
    assert isinstance(app.return_value, LaunchRequest)
    assert Path(app.return_value.argv[0]).name == "claude"
    assert trust.verdict(project).trusted
    assert [e.path for e in trust.trusted_projects()] == [str(project.resolve())]
