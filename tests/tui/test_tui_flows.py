"""Pilot tests: the real app on the real wizard engine, real state files in tmp dirs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from textual.widgets import Button, Input, Static
from tui_support import (
    FIXED_NOW,
    answer_current,
    drive_to,
    okstra_cmd,
    prefill,
    settle,
    step_kind,
    wait_armed,
    wait_for,
)

from okstra_core.errors import StateInUseError
from okstra_core.paths import user_dirs
from okstra_core.session import Wizard
from okstra_tui.app import LaunchRequest
from okstra_tui.screens import (
    ConfirmScreen,
    EditScreen,
    PickScreen,
    RoleCountScreen,
    RoleModelScreen,
    TextScreen,
)
from okstra_tui.screens.launch import LaunchScreen
from okstra_tui.screens.start import StartScreen
from okstra_tui.widgets import ConfirmationView, HistoryPanel, OptionTable, PreflightView

SIZE = (100, 40)


def wizards_dir() -> Path:
    return user_dirs().wizards


def only_state_file() -> Path:
    files = sorted(wizards_dir().glob("*.json"))
    assert len(files) == 1, files
    return files[0]


def error_text(app) -> str:
    error = app.screen.query_one("#error", Static)
    return str(error.render()) if error.has_class("-visible") else ""


async def test_new_setup_creates_a_state_file_named_by_the_clock(app_factory) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert isinstance(app.screen, StartScreen)
        table = app.screen.query_one("#wizards", OptionTable)
        assert table.highlighted_value == "new"
        await pilot.press("enter")
        await wait_for(pilot, app, lambda: isinstance(app.screen, PickScreen), "task_pick")
        assert app.screen.prompt.id == "task_pick"
        path = only_state_file()
        assert path.name == FIXED_NOW.strftime("%Y%m%d-%H%M%S") + ".json"
        assert app.wizard is not None and app.wizard.path == path


@pytest.mark.slow
async def test_whole_setup_to_confirm_shows_provenance_and_preflight(app_factory) -> None:
    app = app_factory(launch="none")
    async with app.run_test(size=SIZE) as pilot:
        await drive_to(pilot, app, "confirm")
        screen = app.screen
        assert isinstance(screen, ConfirmScreen)
        text = str(screen.query_one(ConfirmationView).render())
        assert "grp/one" in text
        assert "okstra's default" in text and "your choice" in text
        preflight = str(screen.query_one(PreflightView).render())
        assert "✓ leader#1: claude" in preflight  # preflight ran (dry run) and passed
        history = screen.query_one(HistoryPanel)
        assert history.step_ids == tuple(e.step_id for e in app.wizard.history())
        assert [b.id for b in screen.query(Button)] == ["do-confirm", "do-edit", "do-abort"]
        # No button has the focus: Enter never launches from where the screen opens.
        assert screen.focused is screen.query_one("#summary")


async def test_refused_brief_shows_inline_and_changes_nothing(app_factory, project) -> None:
    app = app_factory(state=prefill(project, "brief"))
    async with app.run_test(size=SIZE) as pilot:
        await drive_to(pilot, app, "brief")
        path = only_state_file()
        before = path.read_bytes()
        screen = app.screen
        await pilot.press(*"missing.md", "enter")
        await settle(pilot, app)
        assert app.screen is screen and isinstance(screen, TextScreen)
        assert "missing.md" in error_text(app)
        box = screen.query_one("#answer", Input)
        assert box.value == "missing.md" and box.has_class("-invalid") and box.has_focus
        assert path.read_bytes() == before
        # The screen stays usable: correct the answer in place.
        box.value = "brief.md"
        await answer_current(pilot, app)
        assert step_kind(app) == "task_type"


async def test_escape_goes_back_one_step_and_preselects_the_dropped_answer(
    app_factory, project
) -> None:
    app = app_factory(state=prefill(project, "task_id"))
    async with app.run_test(size=SIZE) as pilot:
        await drive_to(pilot, app, "task_id")
        await pilot.press("escape")
        await settle(pilot, app)
        assert step_kind(app) == "task_group"
        assert app.screen.query_one("#answer", Input).value == "grp"
        assert [e.step_id for e in app.wizard.history()] == ["task_pick"]


async def test_backspace_is_back_on_a_pick_screen(app_factory, project) -> None:
    app = app_factory(state=prefill(project, "task_type"))
    async with app.run_test(size=SIZE) as pilot:
        await drive_to(pilot, app, "task_type")
        await pilot.press("backspace")
        await settle(pilot, app)
        assert step_kind(app) == "brief"


@pytest.mark.slow
async def test_rewind_from_the_history_panel_then_enter_through(app_factory, project) -> None:
    app = app_factory(launch="none", state=prefill(project, "confirm"))
    async with app.run_test(size=SIZE) as pilot:
        await drive_to(pilot, app, "confirm")
        answered = [e.step_id for e in app.wizard.history()]
        await pilot.press("ctrl+r")  # the history panel's own key
        history = app.screen.query_one(HistoryPanel)
        assert app.screen.focused is history
        history.highlighted = answered.index("task_type")
        await pilot.press("enter")
        await settle(pilot, app)
        assert step_kind(app) == "task_type"
        assert app.screen.query_one("#options", OptionTable).highlighted_value == (
            "requirements-discovery"
        )
        # The dropped answers are remembered: Enter through them back to confirm.
        await drive_to(pilot, app, "confirm")
        assert [e.step_id for e in app.wizard.history()] == answered


async def test_edit_from_confirm_rewinds_to_the_chosen_step(app_factory, project) -> None:
    app = app_factory(launch="none", state=prefill(project, "confirm"))
    async with app.run_test(size=SIZE) as pilot:
        await drive_to(pilot, app, "confirm")
        await pilot.press("e")
        await settle(pilot, app)
        assert isinstance(app.screen, EditScreen)
        table = app.screen.query_one("#options", OptionTable)
        assert table.rows[0].cells == ("task: Start a new task",)
        table.select_value("role-count:analyser")
        await pilot.press("enter")
        await settle(pilot, app)
        assert isinstance(app.screen, RoleCountScreen)
        assert app.screen.query_one("#options", OptionTable).highlighted_value == "2"


async def test_e_outside_confirm_focuses_the_history(app_factory, project) -> None:
    app = app_factory(state=prefill(project, "task_type"))
    async with app.run_test(size=SIZE) as pilot:
        await drive_to(pilot, app, "task_type")
        await pilot.press("e")
        await pilot.pause()
        assert app.screen.focused is app.screen.query_one(HistoryPanel)


async def test_quit_then_resume_from_start_and_from_state(app_factory) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await drive_to(pilot, app, "role_count")
        prompt_id = app.screen.prompt.id
        await pilot.press("q")
        await pilot.pause()
    assert app.return_value is None
    path = only_state_file()

    again = app_factory(state=path)
    async with again.run_test(size=SIZE) as pilot:
        await settle(pilot, again)
        assert again.screen.prompt.id == prompt_id
        await pilot.press("q")

    start = app_factory()
    async with start.run_test(size=SIZE) as pilot:
        await settle(pilot, start)
        table = start.screen.query_one("#wizards", OptionTable)
        assert table.rows[1].value == str(path)
        assert table.rows[1].cells[:3] == (
            "grp/one",
            "requirements-discovery",
            "in progress · step 6 of ~14",
        )
        # The setup just quit is highlighted: Enter resumes it.
        assert table.highlighted_value == str(path)
        await pilot.press("enter")
        await wait_for(pilot, start, lambda: step_kind(start) == "role_count", "resume")
        assert start.screen.prompt.id == prompt_id


async def test_the_open_wizard_is_locked_but_readable(app_factory, project) -> None:
    path = prefill(project, "task_group")
    app = app_factory(state=path)
    async with app.run_test(size=SIZE) as pilot:
        await drive_to(pilot, app, "task_group")
        other = Wizard.open(path)  # reading works while the app holds the lock
        assert other.prompt().id == "task_group"
        with pytest.raises(StateInUseError):
            other.submit("grp")

        step = subprocess.run(
            [*okstra_cmd(), "wizard", "step", "--state", str(path), "--answer", "grp"],
            capture_output=True,
            text=True,
            env=dict(os.environ),
            timeout=60,
            check=False,
        )
        assert "in use" in json.loads(step.stdout)["error"]
        show = subprocess.run(
            [*okstra_cmd(), "wizard", "show", "--state", str(path)],
            capture_output=True,
            text=True,
            env=dict(os.environ),
            timeout=60,
            check=False,
        )
        assert json.loads(show.stdout)["ok"] is True
    # Quitting released the lock.
    assert Wizard.open(path).submit("grp").next.id == "task_id"


async def test_unavailable_models_are_dimmed_with_reason_and_not_selectable(
    app_factory, project, fake_bin, monkeypatch
) -> None:
    directory = fake_bin("claude", "codex", directory=project.parent / "b")
    monkeypatch.setenv("PATH", os.pathsep.join([str(directory), "/usr/bin", "/bin"]))
    app = app_factory(state=prefill(project, "role_model"))
    async with app.run_test(size=SIZE) as pilot:
        await drive_to(pilot, app, "role_model")
        assert isinstance(app.screen, RoleModelScreen)
        table = app.screen.query_one("#options", OptionTable)
        disabled = [r for r in table.rows if r.disabled_reason]
        assert disabled and any("not found on PATH" in str(r.disabled_reason) for r in disabled)
        for index, row in enumerate(table.rows):
            assert table.get_option_at_index(index).disabled == bool(row.disabled_reason)
        for _ in range(len(table.rows)):
            await pilot.press("down")
            assert table.highlighted_value not in {r.value for r in disabled}


async def test_launch_none_shows_steps_and_the_start_command(
    app_factory, project, monkeypatch
) -> None:
    log = project.parent / "fake-cli.log"
    monkeypatch.setenv("FAKE_CLI_LOG", str(log))
    app = app_factory(launch="none", state=prefill(project, "confirm"))
    async with app.run_test(size=SIZE) as pilot:
        await drive_to(pilot, app, "confirm")
        await pilot.press("l")
        await wait_for(pilot, app, lambda: isinstance(app.screen, LaunchScreen), "launch")
        await settle(pilot, app)
        screen = app.screen
        assert screen.finished and not screen.failed
        assert "preflight" in screen.steps and "writing the run files" in screen.steps
        result = str(screen.query_one("#result", Static).render())
        assert "Nothing launched" in result and "requirements-discovery-" in result
        assert any((project / ".okstra" / "tasks" / "grp" / "one" / "runs").iterdir())
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    probes = (["--version"], ["--help"], ["auth", "status"], ["login", "status"])
    assert all(c["argv"] in probes for c in calls)  # preflight's probes only


async def test_launch_exec_exits_with_the_argv_to_exec(app_factory, project) -> None:
    app = app_factory(launch="exec", state=prefill(project, "confirm"))
    async with app.run_test(size=SIZE) as pilot:
        await drive_to(pilot, app, "confirm")
        await pilot.click("#do-confirm")
        await wait_for(pilot, app, lambda: app.return_value is not None, "the app to exit")
    request = app.return_value
    assert isinstance(request, LaunchRequest)
    assert Path(request.argv[0]).name == "claude"
    assert "--session-id" in request.argv
    assert request.cwd == project.resolve()


async def test_a_confirmed_leader_that_would_fail_preflight_is_asked_again(
    app_factory, project, monkeypatch
) -> None:
    # Confirmed while claude was fine; then its CLI changes (its help loses the flags).
    state = prefill(project, "confirm")
    monkeypatch.setenv("FAKE_CLI_HELP", "usage: claude [prompt]")
    claude = Path(shutil.which("claude") or "")
    with claude.open("a", encoding="utf-8") as fh:  # a new build: the kept verdict is stale
        fh.write("# rebuilt\n")
    app = app_factory(launch="none", state=state)
    async with app.run_test(size=SIZE) as pilot:
        # One readiness verdict: the wizard's model lists and preflight agree, so the
        # leader's claude model is asked again (Enter takes the default that can run)
        # and the confirmation never shows a member preflight would refuse.
        await drive_to(pilot, app, "confirm")
        text = str(app.screen.query_one(PreflightView).render())
        assert "✗" not in text, text
        assert "✓ leader#1: codex" in text, text


async def test_abort_returns_to_the_start_screen(app_factory, project) -> None:
    app = app_factory(state=prefill(project, "confirm"))
    async with app.run_test(size=SIZE) as pilot:
        await drive_to(pilot, app, "confirm")
        await pilot.press("a")  # asks first; y aborts
        await settle(pilot, app)
        await pilot.press("y")
        await settle(pilot, app)
        assert isinstance(app.screen, StartScreen)
        assert "abort" in error_text(app).lower()


async def test_a_confirmed_wizard_waits_for_enter_and_escape_goes_back(
    app_factory, project
) -> None:
    path = prefill(project, "confirm")
    Wizard.open(path).submit("confirm")
    again = app_factory(state=path, launch="none")
    async with again.run_test(size=SIZE) as pilot:
        await settle(pilot, again)
        assert isinstance(again.screen, LaunchScreen) and again.screen.waiting
        assert not again.screen.steps
        await wait_armed(pilot, again)
        await pilot.press("escape")
        await settle(pilot, again)
        assert isinstance(again.screen, ConfirmScreen)


async def test_a_broken_state_file_is_an_inline_error(app_factory) -> None:
    wizards_dir().mkdir(parents=True, exist_ok=True)
    bad = wizards_dir() / "bad.json"
    bad.write_bytes(b"\x00not json")
    app = app_factory(state=bad)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert isinstance(app.screen, StartScreen)
        assert "bad.json" in error_text(app)
        table = app.screen.query_one("#wizards", OptionTable)
        broken = [r for r in table.rows if r.value == str(bad)]
        assert broken and broken[0].disabled_reason
    assert bad.read_bytes() == b"\x00not json"


async def test_command_palette_offers_back_and_edit(app_factory, project) -> None:
    app = app_factory(state=prefill(project, "task_group"))
    async with app.run_test(size=SIZE) as pilot:
        await drive_to(pilot, app, "task_group")
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert {"Back", "Edit", "Quit", "Theme"} <= set(titles)
        back = next(c for c in app.get_system_commands(app.screen) if c.title == "Back")
        back.callback()
        await settle(pilot, app)
        assert step_kind(app) == "task_pick"
