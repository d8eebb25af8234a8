"""The start screen shows this project's setups and runs only (others behind `a`), and
each setup's state: in progress, launched as run …, aborted."""

from __future__ import annotations

from tui_support import fixed_environment, make_project, prepared, settle, start_loaded, wait_for

from okstra_tui.screens.start import StartScreen
from okstra_tui.widgets import OptionTable

SIZE = (120, 40)


async def test_a_directory_without_okstra_shows_no_other_projects_runs(
    app_factory, project
) -> None:
    other = make_project(project.parent / "other")
    prepared(other, "gizmo")
    assert not (project / ".okstra").exists()
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        screen = await start_loaded(pilot, app)
        runs = screen.query_one("#runs", OptionTable)
        assert runs.rows == ()
        assert project.name in str(screen.query_one("#runs-title").render())
        # The footer names the toggle; `a` shows every project's runs.
        assert any(k == "a" and b.binding.show for k, b in app.active_bindings.items())
        await pilot.press("a")
        await wait_for(pilot, app, lambda: len(runs.rows) == 1, "every project's runs")
        assert runs.rows[0].cells[1].endswith("perf/gizmo")


async def test_each_setup_says_its_state(app_factory, project) -> None:
    from tui_support import prefill

    from okstra_core.session import Wizard
    from okstra_core.setup_runs import record_setup_run

    aborted = prefill(project, "confirm")
    Wizard.open(aborted).submit("abort")
    launched = prefill(project, "confirm")
    Wizard.open(launched).submit("confirm")
    run = prepared(project, "widget")
    record_setup_run(launched, run_id=run.run_id, run_dir=run.run_dir, at="2026-01-15T09:30Z")
    confirmed = prefill(project, "confirm")
    Wizard.open(confirmed).submit("confirm")
    # Past the estimated total (roles were added): the step never passes the total.
    in_progress = prefill(project, "confirm")
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        screen = app.screen
        assert isinstance(screen, StartScreen)
        states = {r.value: r.cells[2] for r in screen.query_one("#wizards", OptionTable).rows}
    assert states[str(aborted)] == "aborted"
    assert states[str(launched)] == f"launched as run {run.run_id}"
    assert states[str(confirmed)] == "confirmed, not launched"
    shown = states[str(in_progress)]
    assert shown.startswith("in progress · step ")
    current, total = (int(n) for n in shown.removeprefix("in progress · step ").split(" of ~"))
    assert current <= total


def test_the_app_started_in_a_subdirectory_works_on_the_repository(
    tmp_path, fake_path, monkeypatch
) -> None:
    from okstra_tui.app import make_app

    repo = tmp_path / "repo"
    deep = repo / "src" / "deep"
    deep.mkdir(parents=True)
    (repo / ".git").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(deep)
    app = make_app(environment=fixed_environment())
    assert app.project_root == repo.resolve()
