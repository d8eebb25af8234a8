"""The terminal app never shows a traceback for a key (Textual's Pilot, real wizard engine).

Random bursts of keys at a person's speed (`key_bursts.py`: 10–40 keys 0–80 ms apart,
resizes down to 12×3, nothing waiting for the app to be ready) over the start screen and
wizard screens at several steps; every burst runs in a fresh app, and an exception in
any handler ends the app and fails the burst, named by its seed so it can be replayed.
CI runs a fixed handful of seeds (one per kind of first screen); the full thousand run
with `scripts/stress_keys.py`. `OKSTRA_KEY_BURSTS` / `OKSTRA_KEY_FIRST_SEED` run a range
of seeds here instead.

Each kind of crash the bursts found has a test of its own below that reproduces it
deterministically: a key that reaches a dialog after it was answered, a palette after it
was closed, a screen before its widgets exist or after they are gone, a worker's result
after its screen was replaced.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.command import CommandPalette
from textual.widgets import Input

from okstra_core.paths import user_dirs
from tests.security.key_bursts import (
    STARTS,
    make_app,
    prepare_wizards_folder,
    run_burst,
)
from tests.tui.tui_support import make_project, prefill, settle, wait_for

# Seeds whose bursts start on each kind of first screen (see `key_bursts.plan`).
CI_SEEDS = (0, 1, 2, 3, 7, 9, 45)
BURSTS = int(os.environ.get("OKSTRA_KEY_BURSTS", "0"))
FIRST_SEED = int(os.environ.get("OKSTRA_KEY_FIRST_SEED", "0"))
# The keys of the older, key-by-key bursts (each key waited for): kept for the seed
# that found a crash that way.
PRESSED_KEYS = ("up", "down", "left", "right", "pageup", "pagedown", "home", "end",
                "enter", "escape", "tab", "shift+tab", "ctrl+p", "backspace", "e", "d",
                "y", "n", "a", "l", "question_mark", "f1", "space", "1", "2", "x",
                "ctrl+a", "delete")  # fmt: skip
PRESSED_SIZES = ((80, 24), (30, 8), (20, 5), (120, 40), (40, 12), (100, 30), (12, 3), (200, 6))


@pytest.fixture
def burst_project(tmp_path: Path, fake_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FAKE_CLI_HELP", "usage: cli [--session-id ID] [--model M] "
                       "[--no-daemon] [--config K=V] [prompt]")  # fmt: skip
    project = make_project(tmp_path / "proj")
    prepare_wizards_folder(tmp_path)
    prefill(project, "brief")
    return project


def _app(project: Path, state: Path | None) -> Any:
    return make_app(project, state)


async def _pressed_burst(base: Path, seed: int) -> None:
    """The older burst: each key pressed and waited for (Pilot.press)."""
    project = make_project(base / f"pressed-{seed}")
    rng = random.Random(seed)
    start = rng.choice(STARTS)
    state = prefill(project, start) if start is not None else None
    app = _app(project, state)
    async with app.run_test(size=rng.choice(PRESSED_SIZES)) as pilot:
        for _ in range(rng.randint(10, 40)):
            if rng.random() < 0.15:
                await pilot.resize_terminal(*rng.choice(PRESSED_SIZES))
            await pilot.press(rng.choice(PRESSED_KEYS))
        await pilot.pause()


@pytest.mark.parametrize(
    ("size", "keys"),
    [
        ((80, 24), ["ctrl+p", "pagedown"]),  # the command palette's list, before layout
        ((80, 24), ["ctrl+p", "pageup"]),
        ((30, 8), ["pagedown"]),  # the start screen's list in a tiny terminal
        ((20, 5), ["pageup", "pagedown", "end", "pagedown"]),
    ],
)
async def test_keys_that_crashed_the_app(
    burst_project: Path, size: tuple[int, int], keys: list[str]
) -> None:
    app = _app(burst_project, None)
    async with app.run_test(size=size) as pilot:
        for key in keys:
            await pilot.press(key)
        await pilot.pause()
        assert app.is_running


async def test_a_pressed_burst_that_crashed_the_app(burst_project: Path) -> None:
    # An option list wrapped at width 0 while the app closed (okstra_tui/_textual_fixes.py).
    await _pressed_burst(burst_project.parent, 20698)


def _seeds() -> list[int]:
    return list(range(FIRST_SEED, FIRST_SEED + BURSTS)) if BURSTS else list(CI_SEEDS)


@pytest.mark.slow
async def test_random_key_bursts_with_resizes(burst_project: Path) -> None:
    failures: list[str] = []
    for seed in _seeds():
        try:
            await run_burst(burst_project.parent / "bursts", seed)
        except Exception as exc:  # any crash of the app: collect, then report all
            failures.append(f"seed {seed}: {type(exc).__name__}: {exc}".splitlines()[0])
    assert not failures, "\n".join(failures)


# -- each crash kind, deterministically --------------------------------------------------


async def _opened(pilot: Any, app: Any, screen_type: type) -> Any:
    await wait_for(pilot, app, lambda: isinstance(app.screen, screen_type), screen_type.__name__)
    await settle(pilot, app)
    return app.screen


async def _discard_dialog(pilot: Any, app: Any) -> Any:
    from okstra_tui.screens.dialog import DiscardScreen

    app.screen.query_one("#answer", Input).value = "typed, not submitted"
    await pilot.press("escape")
    return await _opened(pilot, app, DiscardScreen)


async def _delete_dialog(pilot: Any, app: Any) -> Any:
    from okstra_tui.screens.dialog import DeleteWizardScreen

    table = app.screen.query_one("#wizards")
    table.highlighted = 1  # the setup under "New setup"
    await pilot.press("d")
    return await _opened(pilot, app, DeleteWizardScreen)


async def _doctor_dialog(pilot: Any, app: Any) -> Any:
    from okstra_tui.screens.doctor import DoctorScreen

    await pilot.press("c")
    return await _opened(pilot, app, DoctorScreen)


async def _runs_screen(pilot: Any, app: Any) -> Any:
    from okstra_tui.screens.runs import RunsScreen

    app.show_runs()
    return await _opened(pilot, app, RunsScreen)


DIALOGS: dict[str, tuple[str | None, Callable[..., Any], str]] = {
    # name: (wizard step to open at, or None for the start screen; how to open; the action)
    "discard": ("task_group", _discard_dialog, "action_answer"),
    "delete": (None, _delete_dialog, "action_answer"),
    "doctor": (None, _doctor_dialog, "action_close"),
    "runs": (None, _runs_screen, "action_close"),
}


@pytest.mark.parametrize("name", sorted(DIALOGS))
async def test_a_dialog_answered_twice_closes_once(burst_project: Path, name: str) -> None:
    """`y` typed twice reaches the dialog twice: the second must not close the screen
    under it (Textual's dismiss pops whatever is on top; the answer's future was set
    twice: InvalidStateError)."""
    step, open_it, action = DIALOGS[name]
    state = prefill(burst_project, step) if step else None
    app = _app(burst_project, state)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, app)
        dialog = await open_it(pilot, app)
        under = app.screen_stack[:-1]
        answer = getattr(dialog, action)
        args = {"discard": (True,), "delete": (False,)}.get(name, ())
        answer(*args)
        answer(*args)  # the same key again, handled by the dialog after it was answered
        await settle(pilot, app)
        assert app.is_running
        assert len(app.screen_stack) == len(under), [type(s).__name__ for s in app.screen_stack]


async def test_a_palette_closed_twice_closes_once(burst_project: Path) -> None:
    """Escape typed three times into the command palette: it closes once; the start
    screen stays (the second and third closed the screens under it, then raised
    ScreenStackError)."""
    from okstra_tui.screens.start import StartScreen

    app = _app(burst_project, None)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, app)
        await pilot.press("ctrl+p")
        palette = await _opened(pilot, app, CommandPalette)
        for _ in range(3):
            palette._action_escape()  # as its escape binding does
        await settle(pilot, app)
        assert app.is_running and isinstance(app.screen, StartScreen)


async def test_a_palette_opened_again_while_the_last_one_closes(burst_project: Path) -> None:
    """Ctrl+P, Escape, Ctrl+P: the closed palette was still registered under its id while
    it was removed, and the new one raised DuplicateIds."""
    app = _app(burst_project, None)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, app)
        await pilot.press("ctrl+p")
        palette = await _opened(pilot, app, CommandPalette)
        palette._action_escape()
        app.action_command_palette()  # Ctrl+P again, before the closed one is gone
        await settle(pilot, app)
        assert app.is_running


async def test_a_dry_run_answering_before_the_confirm_screen_is_built(
    burst_project: Path,
) -> None:
    """A refused request answers at once: its message reached the confirm screen before
    `#preview-text` existed (NoMatches); it is shown once the screen is built."""
    from okstra_tui.messages import PreflightChecked

    state = prefill(burst_project, "confirm")
    app = _app(burst_project, state)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, app)
        app.show_start()
        await settle(pilot, app)
        app.open_wizard(state, create=False)
        screen = app.screen  # pushed; not composed yet
        screen.on_preflight_checked(PreflightChecked(error="refused at once"))
        await settle(pilot, app)
        assert app.is_running


async def test_the_doctor_dialog_opened_twice_shows_its_checks_once_built(
    burst_project: Path,
) -> None:
    """`c` typed twice opened two doctor dialogs, and a check's result reached one
    before its widgets existed (the worker failed: NoMatches on '#summary')."""
    from okstra_tui.screens.doctor import DoctorScreen

    app = _app(burst_project, None)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, app)
        start = app.screen
        start.action_doctor()
        start.action_doctor()  # the second `c`, handled by the start screen too
        dialog = app.screen
        dialog._show("checked early", "")  # a result before the dialog is built
        await settle(pilot, app)
        assert app.is_running
        assert sum(isinstance(s, DoctorScreen) for s in app.screen_stack) == 1


# (step, action) pairs: a key's action reaching a prompt screen whose widgets do not
# exist yet, or no longer: NoMatches on '#answer', '#options', '#prompt', '#error', ….
LATE_ACTIONS = [
    ("task_group", "action_back"),  # '#answer': is there typed text to lose?
    ("task_group", "action_history"),
    ("task_group", "action_toggle_help"),
    ("brief", "action_open_editor"),
    ("task_type", "focus_answer"),  # '#options'
    ("role_count", "action_toggle_help"),  # '#prompt', where the help panel is mounted
    ("role_model", "action_accept_defaults"),  # '#error'
    ("confirm", "action_toggle_preview"),
    ("confirm", "action_lead_access"),
    ("confirm", "focus_answer"),
]


@pytest.mark.parametrize("when", ["before its widgets exist", "after it was replaced"])
@pytest.mark.parametrize(("step", "action"), LATE_ACTIONS)
async def test_a_key_reaching_a_screen_without_its_widgets_does_nothing(
    burst_project: Path, step: str, action: str, when: str
) -> None:
    state = prefill(burst_project, step)
    app = _app(burst_project, state)
    async with app.run_test(size=(30, 8)) as pilot:
        await settle(pilot, app)
        old = app.screen
        app.show_start()
        if when.startswith("after"):
            getattr(old, action)()  # replaced: its widgets are still there, being removed
            await settle(pilot, app)
            getattr(old, action)()  # and once they are gone
            old.show_error("late")
        else:
            await settle(pilot, app)
            app.open_wizard(state, create=False)
            getattr(app.screen, action)()  # pushed; not composed yet
        await settle(pilot, app)
        assert app.is_running


async def test_worker_results_after_the_start_screen_was_replaced_are_dropped(
    burst_project: Path,
) -> None:
    """The runs and the doctor line arrive from workers: after Enter opened a setup, the
    start screen they were for is gone (its `#runs` and `#doctor` with it)."""
    app = _app(burst_project, None)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, app)
        start = app.screen
        await pilot.press("enter")
        await wait_for(pilot, app, lambda: app.screen is not start, "the setup opened")
        await settle(pilot, app)
        start._show_runs([], "")
        start._show_doctor("late")
        start.show_error("late")
        start.action_toggle_all()
        await settle(pilot, app)
        assert app.is_running


async def test_the_start_screen_shows_tampered_wizards_as_broken_and_goes_on(
    burst_project: Path,
) -> None:
    """Counts past the absolute cap: a disabled row naming the field; counts above the
    profile's max (but within the cap): resumable, the answer undone with the reason."""
    import json

    from okstra_tui.screens.start import StartScreen
    from okstra_tui.widgets import OptionTable
    from tests.tui.tui_support import settle, step_kind, wait_for

    wizards = user_dirs().wizards
    source = prefill(burst_project, "role_model")
    raw = json.loads(source.read_bytes())
    role = next(iter(raw["roleCounts"]))
    huge = wizards / "huge.json"
    huge.write_text(json.dumps({**raw, "roleCounts": {role: 100_000_000}}))
    above = wizards / "above.json"
    above.write_text(json.dumps({**raw, "roleCounts": {**raw["roleCounts"], role: 10}}))
    app = _app(burst_project, None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        assert isinstance(app.screen, StartScreen)
        rows = {r.value: r for r in app.screen.query_one("#wizards", OptionTable).rows}
        assert f"roleCounts.{role}" in (rows[str(huge)].disabled_reason or ""), rows[str(huge)]
        assert rows[str(above)].disabled_reason is None
        assert rows[str(source)].disabled_reason is None
        table = app.screen.query_one("#wizards", OptionTable)
        table.highlighted = next(i for i, r in enumerate(table.rows) if r.value == str(above))
        await pilot.press("enter")
        await wait_for(pilot, app, lambda: step_kind(app) == "role_count", "the rewound count")
        assert app.is_running
        assert "no longer holds" in (app.screen.prompt.help or ""), app.screen.prompt.help


@pytest.mark.parametrize(
    "keys",
    [
        # Textual's binding check asked for the screen on top: ScreenStackError.
        ("enter", "escape", "e", "down"),
        # A palette opened as the app closes: its search found no list (NoMatches).
        ("ctrl+p", "x"),
    ],
)
async def test_keys_typed_while_the_app_closes_are_dropped(
    burst_project: Path, keys: tuple[str, ...]
) -> None:
    """Keys that arrive while the app closes (keys right after `q`)."""
    from tests.security.key_bursts import key_event

    app = _app(burst_project, None)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        app.exit()
        for key in keys * 20:
            app.post_message(key_event(key))
    assert app.return_code == 0
