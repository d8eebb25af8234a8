"""Keys never act where the person did not mean them to (Pilot, real engine and files).

- Keys typed ahead of the confirm screen (or a waiting launch screen) are dropped:
  Launch needs a fresh key on a screen that has been shown and has settled.
- Tab never reaches the history panel; the panel is entered with its own key, and a
  rewind (or Back) that would drop typed text asks first.
- The footer names the key that submits a text answer.
"""

from __future__ import annotations

import json

import pytest
from textual import events
from textual.widgets import Button, Input
from tui_support import (
    REAL_ARM_DELAY,
    drive_to,
    prefill,
    settle,
    step_kind,
    wait_armed,
    wait_for,
)

from okstra_core.paths import user_dirs
from okstra_tui.screens import ConfirmScreen, TextScreen
from okstra_tui.screens.base import GuardedScreen
from okstra_tui.screens.dialog import DiscardScreen
from okstra_tui.screens.launch import LaunchScreen
from okstra_tui.widgets import HistoryPanel

SIZE = (100, 40)


def only_state_file():
    (path,) = sorted(user_dirs().wizards.glob("*.json"))
    return path


def typed_ahead() -> list[tuple[str, str | None]]:
    return [("enter", "\r"), ("enter", "\r"), ("l", "l"), ("enter", "\r"), ("space", " ")]


def footer_keys(screen) -> dict[str, str]:
    """The footer's keys and their descriptions (what Footer itself shows)."""
    return {
        key: active.binding.description
        for key, active in screen.active_bindings.items()
        if active.binding.show
    }


@pytest.fixture(autouse=True)
def _real_arming(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about the arming delay: the product's own (0.4 s), not the
    quick one the other app tests use."""
    monkeypatch.setattr(GuardedScreen, "ARM_DELAY", REAL_ARM_DELAY)


async def test_keys_typed_ahead_of_confirm_never_launch(app_factory, project) -> None:
    path = prefill(project, "directive_pick")
    app = app_factory(launch="none", state=path)
    async with app.run_test(size=SIZE) as pilot:
        await drive_to(pilot, app, "directive_pick")
        # One burst read from the terminal, as `tmux send-keys Enter Enter l Enter`
        # delivers it: the first Enter answers "No directive", the rest is typed
        # before the confirm screen is on the terminal.
        burst = [events.Key(k, c) for k, c in typed_ahead()]
        for key in burst:
            app.post_message(key)
        await wait_for(pilot, app, lambda: step_kind(app) == "confirm", "the confirm screen")
        await settle(pilot, app)
        screen = app.screen
        assert isinstance(screen, ConfirmScreen)
        assert not json.loads(path.read_text())["confirmed"]
        assert not (project / ".okstra" / "tasks" / "grp" / "one" / "runs").exists()
        launch = screen.query_one("#do-confirm", Button)
        await wait_armed(pilot, app)
        assert not launch.disabled and not launch.has_focus
        # Enter on the screen as it opened still does nothing: Launch has its own key.
        await pilot.press("enter")
        await settle(pilot, app)
        assert app.screen is screen
        assert not json.loads(path.read_text())["confirmed"]
        await pilot.press("l")
        await wait_for(pilot, app, lambda: isinstance(app.screen, LaunchScreen), "launch")
        assert json.loads(path.read_text())["confirmed"] is True


async def test_a_disarmed_confirm_screen_has_nothing_to_launch_with(
    app_factory, project, monkeypatch
) -> None:
    monkeypatch.setattr(ConfirmScreen, "ARM_DELAY", 60.0)  # stays disarmed for the test
    path = prefill(project, "confirm")
    app = app_factory(launch="none", state=path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        screen = app.screen
        assert isinstance(screen, ConfirmScreen) and not screen.armed
        buttons = list(screen.query(Button))
        assert buttons and all(b.disabled and not b.has_focus for b in buttons)
        assert screen.focused is screen.query_one("#summary")
        await pilot.press("l", "enter", "a", "e", "tab", "enter")
        await settle(pilot, app)
        assert app.screen is screen
        assert not json.loads(path.read_text())["confirmed"]


async def test_a_key_read_before_arming_is_dropped_even_when_handled_late(
    app_factory, project
) -> None:
    app = app_factory(launch="none", state=prefill(project, "confirm"))
    early = events.Key("l", "l")  # read from the terminal before the app even started
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        screen = app.screen
        assert isinstance(screen, ConfirmScreen)
        assert not screen.accepts_key(early)
        await wait_armed(pilot, app)
        assert not screen.accepts_key(early)  # handled late, still dropped
        assert screen.accepts_key(events.Key("l", "l"))
        assert screen.accepts_key(events.Key("ctrl+q", None))
        # The app drops it too: the state stays unconfirmed.
        app.post_message(early)
        await settle(pilot, app)
        assert app.screen is screen
        assert not json.loads(only_state_file().read_text())["confirmed"]


async def test_keys_typed_ahead_of_a_waiting_launch_screen_do_nothing(app_factory, project) -> None:
    from okstra_core.session import Wizard

    path = prefill(project, "confirm")
    Wizard.open(path).submit("confirm")
    app = app_factory(state=None, launch="none")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        # The start screen highlights "New setup" (a confirmed setup does not resume
        # by default): move to it, then Enter opens its waiting launch screen and
        # the next Enter is typed ahead.
        await pilot.press("down", "enter", "enter")
        await settle(pilot, app)
        assert isinstance(app.screen, LaunchScreen) and app.screen.waiting
        assert not app.screen.steps
        await wait_armed(pilot, app)
        await pilot.press("enter")
        await wait_for(pilot, app, lambda: app.screen.finished, "prepare to finish")


async def test_tab_then_enter_never_rewinds(app_factory, project) -> None:
    app = app_factory(state=prefill(project, "task_type"))
    async with app.run_test(size=SIZE) as pilot:
        await drive_to(pilot, app, "task_type")
        before = [e.step_id for e in app.wizard.history()]
        history = app.screen.query_one(HistoryPanel)
        for _ in range(3):
            await pilot.press("tab")
            assert not history.has_focus
        await pilot.press("enter")  # answers the highlighted task type
        await settle(pilot, app)
        after = [e.step_id for e in app.wizard.history()]
        assert after[: len(before)] == before and len(after) == len(before) + 1


async def test_tab_on_a_text_screen_stays_on_the_answer(app_factory, project) -> None:
    app = app_factory(state=prefill(project, "task_id"))
    async with app.run_test(size=SIZE) as pilot:
        await drive_to(pilot, app, "task_id")
        await pilot.press(*"abc", "tab", "shift+tab", "tab")
        box = app.screen.query_one("#answer", Input)
        assert box.has_focus and box.value == "abc"
        await pilot.press("enter")
        await settle(pilot, app)
        assert step_kind(app) == "brief"
        assert app.wizard.state.task_id == "abc"


async def test_rewind_from_history_asks_before_dropping_typed_text(app_factory, project) -> None:
    app = app_factory(state=prefill(project, "task_id"))
    async with app.run_test(size=SIZE) as pilot:
        await drive_to(pilot, app, "task_id")
        text_screen = app.screen
        await pilot.press(*"half-typed", "ctrl+r")
        history = text_screen.query_one(HistoryPanel)
        assert history.has_focus
        assert "Rewind here" in footer_keys(text_screen).values()
        await pilot.press("enter")  # rewind to the newest answer (task_group)
        await settle(pilot, app)
        assert isinstance(app.screen, DiscardScreen)
        await pilot.press("n")  # keep typing
        await settle(pilot, app)
        assert app.screen is text_screen and step_kind(app) == "task_id"
        assert text_screen.query_one("#answer", Input).value == "half-typed"
        # Escape in the panel hands the focus back to the answer.
        await pilot.press("ctrl+r", "escape")
        assert text_screen.query_one("#answer", Input).has_focus

        await pilot.press("ctrl+r", "enter")
        await settle(pilot, app)
        assert isinstance(app.screen, DiscardScreen)
        await pilot.press("y")
        await settle(pilot, app)
        assert step_kind(app) == "task_group"


async def test_back_asks_only_when_typed_text_would_be_lost(app_factory, project) -> None:
    app = app_factory(state=prefill(project, "task_id"))
    async with app.run_test(size=SIZE) as pilot:
        await drive_to(pilot, app, "task_id")
        await pilot.press(*"xyz", "escape")
        await settle(pilot, app)
        assert isinstance(app.screen, DiscardScreen)
        await pilot.press("escape")  # Escape in the dialog keeps the text
        await settle(pilot, app)
        assert step_kind(app) == "task_id"
        app.screen.query_one("#answer", Input).value = ""
        await pilot.press("escape")  # nothing typed: straight back
        await settle(pilot, app)
        assert step_kind(app) == "task_group"
        assert isinstance(app.screen, TextScreen)


async def test_footer_shows_the_submit_key_and_the_history_key(app_factory, project) -> None:
    app = app_factory(state=prefill(project, "task_group"))
    async with app.run_test(size=SIZE) as pilot:
        await drive_to(pilot, app, "task_group")
        keys = footer_keys(app.screen)
        assert keys.get("enter") == "Submit"
        assert keys.get("ctrl+r") == "History"
        # Letters go into the box: "e" is not offered as Edit on a text screen.
        assert "e" not in keys
