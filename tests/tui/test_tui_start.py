"""The start screen: which setup Enter opens, empty setups not left behind, `d`."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from textual.widgets import Static
from tui_support import FIXED_NOW, fixed_environment, prefill, settle, step_kind, wait_for

from okstra_core.paths import user_dirs
from okstra_core.session import Wizard
from okstra_tui.screens import PickScreen
from okstra_tui.screens.dialog import DeleteWizardScreen
from okstra_tui.screens.start import StartScreen
from okstra_tui.widgets import OptionTable

SIZE = (100, 30)


def files() -> list[str]:
    """Every file of the wizards dir (state files and lock sidecars)."""
    directory = user_dirs().wizards
    return sorted(p.name for p in directory.iterdir()) if directory.is_dir() else []


def wizard_at(project: Path, minutes_ago: int, *answers: str) -> Path:
    """A wizard last saved `minutes_ago` before the app's clock, with `answers` given."""
    env = fixed_environment(FIXED_NOW - timedelta(minutes=minutes_ago))
    wizard = Wizard.init(None, project, host="terminal", environment=env)
    for answer in answers:
        wizard.submit(answer)
    return wizard.path


def table(app) -> OptionTable:
    return app.screen.query_one("#wizards", OptionTable)


async def test_enter_resumes_the_newest_unfinished_setup(app_factory, project) -> None:
    older = wizard_at(project, 90, "new", "grp")
    newest = wizard_at(project, 30, "new", "grp", "two")
    # Newer still, but neither can be resumed: an aborted and a confirmed setup.
    aborted = prefill(project, "confirm")
    Wizard.open(aborted).submit("abort")
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        rows = [r.value for r in table(app).rows]
        assert rows[0] == "new" and str(older) in rows and str(aborted) in rows
        assert table(app).highlighted_value == str(newest)
        await pilot.press("enter")
        await wait_for(pilot, app, lambda: step_kind(app) == "brief", "the resumed prompt")
        assert app.wizard is not None and app.wizard.path == newest


async def test_new_setup_is_the_default_when_nothing_can_resume(app_factory, project) -> None:
    path = prefill(project, "confirm")
    Wizard.open(path).submit("confirm")
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert table(app).highlighted_value == "new"


async def test_quitting_a_new_setup_before_any_answer_leaves_nothing(app_factory) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("enter")  # New setup: its state file exists at once
        await wait_for(pilot, app, lambda: isinstance(app.screen, PickScreen), "task_pick")
        assert len(files()) == 2  # the state file and its .lock
        await pilot.press("q")
    assert files() == []


async def test_back_to_start_drops_the_empty_setup_but_keeps_answered_ones(app_factory) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("enter")
        await wait_for(pilot, app, lambda: isinstance(app.screen, PickScreen), "task_pick")
        app.show_start()  # the command palette's "Start screen"
        await settle(pilot, app)
        assert isinstance(app.screen, StartScreen)
        assert [r.value for r in table(app).rows] == ["new"]
        assert files() == []
        # An answered one stays, even after Escape took its only answer back.
        await pilot.press("enter")
        await wait_for(pilot, app, lambda: isinstance(app.screen, PickScreen), "task_pick")
        await pilot.press("enter")
        await wait_for(pilot, app, lambda: step_kind(app) == "task_group", "task_group")
        await pilot.press("escape")
        await wait_for(pilot, app, lambda: step_kind(app) == "task_pick", "back")
        await pilot.press("q")
    assert len([f for f in files() if f.endswith(".json")]) == 1


async def test_an_empty_setup_the_app_did_not_create_is_kept(app_factory, project) -> None:
    # Made by `okstra wizard init` (a script may be about to step it): not ours to drop.
    path = Wizard.init(None, project, host="terminal", environment=fixed_environment()).path
    app = app_factory(state=path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert step_kind(app) == "task_pick"
        await pilot.press("q")
    assert path.exists()


async def test_d_deletes_the_highlighted_setup_after_confirmation(app_factory, project) -> None:
    path = wizard_at(project, 5, "new", "grp")
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert table(app).highlighted_value == str(path)
        await pilot.press("d")
        await settle(pilot, app)
        assert isinstance(app.screen, DeleteWizardScreen)
        assert str(path) in str(app.screen.query_one("#detail", Static).render())
        await pilot.press("enter")  # the focus is on Keep: a stray Enter deletes nothing
        await settle(pilot, app)
        assert isinstance(app.screen, StartScreen) and path.exists()
        await pilot.press("d", "y")
        await settle(pilot, app)
        assert isinstance(app.screen, StartScreen)
        assert [r.value for r in table(app).rows] == ["new"]
    assert files() == []


async def test_d_on_new_setup_does_nothing_and_refusals_show_inline(app_factory, project) -> None:
    v1 = user_dirs().wizards / "old.json"
    v1.parent.mkdir(parents=True)
    v1.write_text(
        json.dumps(
            {
                "project_root": str(project),
                "task_group": "g",
                "task_id": "t",
                "task_mode": "new",
                "task_type": "requirements-discovery",
                "workers_override": "claude",
            }
        )
    )
    before = v1.read_bytes()
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        table(app).select_value("new")
        await pilot.press("d")
        await settle(pilot, app)
        assert isinstance(app.screen, StartScreen)
        table(app).select_value(str(v1))
        await pilot.press("d", "y")
        await settle(pilot, app)
        error = app.screen.query_one("#error", Static)
        assert error.has_class("-visible") and "v1" in str(error.render())
    assert v1.read_bytes() == before


async def test_start_screen_speaks_the_chosen_language(app_factory, monkeypatch) -> None:
    # OKSTRA_LANG picks the Korean catalog for the app's own text, too.
    monkeypatch.setenv("OKSTRA_LANG", "ko")
    app = app_factory(environment=fixed_environment())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert isinstance(app.screen, StartScreen)
        intro = str(app.screen.query_one("#intro", Static).render())
        assert intro == "작업 하나를 맡을 에이전트 팀을 구성합니다."
        assert table(app).rows[0].cells[0] == "새 구성"
        assert str(app.screen.query_one("#empty", Static).render()) == "이어서 할 구성이 없습니다."
