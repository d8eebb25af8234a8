"""The start screen's runs and doctor line: this project first, others behind `a`.

Real runs prepared by the engine (two projects), real run files (one damaged), the
real lead look-up; the runs and the doctor line arrive from workers after the first
paint, which a held-back runs read proves.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from textual.widgets import Static
from tui_support import fixed_environment, make_project, prepared, settle, start_loaded, wait_for

from okstra_core.session import Wizard
from okstra_tui import run_actions
from okstra_tui.messages import LaunchRequest
from okstra_tui.screens.doctor import DoctorScreen
from okstra_tui.screens.start import StartScreen
from okstra_tui.widgets import OptionTable

SIZE = (100, 30)


def setup(project: Path, *answers: str) -> Path:
    wizard = Wizard.init(None, project, host="terminal", environment=fixed_environment())
    for answer in answers:
        wizard.submit(answer)
    return wizard.path


def text_of(app: Any, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


def runs_table(app: Any) -> OptionTable:
    return app.screen.query_one("#runs", OptionTable)


async def test_this_projects_setups_and_runs_others_behind_a(app_factory, project) -> None:
    other = make_project(project.parent / "other")
    here_run = prepared(project, "widget")
    prepared(other, "gizmo")
    here_setup = setup(project, "new", "grp")
    there_setup = setup(other, "new", "far")
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        screen = await start_loaded(pilot, app)
        setups = [r.value for r in screen.query_one("#wizards", OptionTable).rows]
        assert setups == ["new", str(here_setup)]
        (row,) = runs_table(app).rows
        assert row.cells == (here_run.run_id, "perf/widget", "prepared", "0s")
        assert project.name in text_of(app, "#runs-title")
        # Column headers of both lists.
        assert "Task" in text_of(app, "#columns") and "Lead" in text_of(app, "#run-columns")
        await pilot.press("a")
        await wait_for(pilot, app, lambda: len(runs_table(app).rows) == 2, "every run")
        setups = [r.value for r in screen.query_one("#wizards", OptionTable).rows]
        assert set(setups) == {"new", str(here_setup), str(there_setup)}
        tasks = sorted(r.cells[1] for r in runs_table(app).rows)
        assert tasks == ["other: perf/gizmo", "proj: perf/widget"]
        assert "all projects" in text_of(app, "#runs-title")
        await pilot.press("a")
        await wait_for(pilot, app, lambda: len(runs_table(app).rows) == 1, "this project again")


async def test_a_damaged_run_is_listed_with_why(app_factory, project) -> None:
    good = prepared(project, "widget")
    bad = prepared(project, "gadget")
    (bad.run_dir / "run-manifest.json").write_text("{broken", encoding="utf-8")
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await start_loaded(pilot, app)
        rows = {r.cells[1]: r for r in runs_table(app).rows}
        assert (
            rows["perf/widget"].cells[2] == "prepared" and good.run_id in rows["perf/widget"].cells
        )
        damaged = rows["perf/gadget"]
        assert damaged.cells[2] == "damaged"
        assert damaged.detail is not None and "invalid JSON" in damaged.detail
        assert str(bad.run_dir) not in damaged.detail  # the directory shows below, once
        # Highlighted, the whole reason shows under the list.
        runs_table(app).focus()
        runs_table(app).select_value(str(bad.run_dir))
        await settle(pilot, app)
        assert "invalid JSON" in text_of(app, "#run-detail")


async def test_actions_on_a_run(app_factory, project) -> None:
    run = prepared(project, "widget")
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        screen = await start_loaded(pilot, app)
        shown = {b.binding.action for b in screen.active_bindings.values() if b.enabled}
        assert "attach" not in shown  # only while a run is highlighted
        await pilot.press("tab")
        await settle(pilot, app)
        assert runs_table(app).has_focus
        shown = {b.binding.action for b in screen.active_bindings.values() if b.enabled}
        assert {"attach", "stop", "resume"} <= shown and "delete" not in shown
        assert f"{run.run_id}: lead prepared" in text_of(app, "#run-detail")
        assert f"okstra resume {run.run_dir} --exec" in text_of(app, "#run-detail")
        # Never launched: nothing to attach to, said inline; stop has nothing to stop.
        await pilot.press("t")
        await settle(pilot, app)
        assert "never launched" in text_of(app, "#run-detail")
        await pilot.press("s", "y")  # asked first; y stops
        await settle(pilot, app)
        assert "the lead is now: prepared" in text_of(app, "#run-detail")
        # Resume hands the terminal over: okstra stays the resumed lead's parent.
        await pilot.press("r")
        await settle(pilot, app)
    request = app.return_value
    assert isinstance(request, LaunchRequest)
    assert request.resumed and request.run_dir == run.run_dir
    assert Path(request.argv[0]).name == "claude" and "--resume" in request.argv


async def test_the_doctor_line_opens_the_detail(app_factory, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "no-gemini-login"))
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await start_loaded(pilot, app)
        line = text_of(app, "#doctor")
        # The fake gemini has no login (its [login] rules find nothing): not ready.
        assert "4 of 5 agent CLIs ready" in line and "not logged in: antigravity" in line
        assert line.endswith("— c: details")
        await pilot.press("c")
        await wait_for(pilot, app, lambda: isinstance(app.screen, DoctorScreen), "doctor")
        await pilot.press("escape")
        await settle(pilot, app)
        assert isinstance(app.screen, StartScreen)


async def test_the_runs_read_never_delays_the_first_paint(
    app_factory, project, monkeypatch
) -> None:
    prepared(project, "widget")
    release = threading.Event()
    real = run_actions.read_runs

    def held_back(*args: Any) -> Any:
        assert release.wait(30)
        return real(*args)

    monkeypatch.setattr(run_actions, "read_runs", held_back)
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        # Painted and taking keys while the runs are still being read.
        assert isinstance(screen, StartScreen) and not screen.runs_loaded
        assert screen.query_one("#wizards", OptionTable).has_focus
        assert "Reading the runs" in text_of(app, "#runs-title")
        release.set()
        await wait_for(pilot, app, lambda: screen.runs_loaded, "the runs read")
        assert len(runs_table(app).rows) == 1
