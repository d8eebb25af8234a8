"""The terminal app never shows a traceback for a key (Textual's Pilot, real wizard engine).

Random bursts of keys — navigation, paging, Enter/Escape, the command palette (Ctrl+P),
the app's own bindings — with terminal resizes down to a few cells, over the start
screen (with a FIFO, a dangling link and good wizards in the wizards folder) and over
wizard screens at several steps. Every burst runs in a fresh app; an exception in any
handler ends the app and fails the burst, named by its seed so it can be replayed.

`OKSTRA_KEY_BURSTS` sets how many bursts run (default 24; thousands for a soak run),
`OKSTRA_KEY_FIRST_SEED` the first seed (to split a soak over several processes).
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from okstra_core.paths import user_dirs
from tests.tui.tui_support import FIXED_NOW, fixed_environment, make_project, prefill

KEYS = ("up", "down", "left", "right", "pageup", "pagedown", "home", "end", "enter",
        "escape", "tab", "shift+tab", "ctrl+p", "backspace", "e", "d", "y", "n", "a", "l",
        "question_mark", "f1", "space", "1", "2", "x", "ctrl+a", "delete")  # fmt: skip
SIZES = ((80, 24), (30, 8), (20, 5), (120, 40), (40, 12), (100, 30), (12, 3), (200, 6))
# Where a burst starts: the start screen, or a wizard opened at one of these steps.
STARTS = (None, None, "task_group", "task_type", "brief", "role_count", "role_model",
          "confirm")  # fmt: skip
BURSTS = int(os.environ.get("OKSTRA_KEY_BURSTS", "24"))
# The first seed, so a long soak can be split over several processes.
FIRST_SEED = int(os.environ.get("OKSTRA_KEY_FIRST_SEED", "0"))


@pytest.fixture
def burst_project(tmp_path: Path, fake_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FAKE_CLI_HELP", "usage: cli [--session-id ID] [--model M] "
                       "[--no-daemon] [--config K=V] [prompt]")  # fmt: skip
    project = make_project(tmp_path / "proj")
    wizards = user_dirs().wizards
    wizards.mkdir(parents=True, exist_ok=True)
    os.mkfifo(wizards / "fifo.json")
    (wizards / "dangling.json").symlink_to(tmp_path / "nothing.json")
    prefill(project, "brief")
    return project


def _app(project: Path, state: Path | None) -> Any:
    from okstra_tui.app import make_app

    return make_app(
        project_root=project,
        state=state,
        host="terminal",
        launch="none",  # a burst may reach "Prepare & launch": never start a CLI
        environment=fixed_environment(FIXED_NOW),
        cursor_blink=False,
    )


async def _burst(base: Path, seed: int, keys: Callable[[random.Random], list[str]]) -> None:
    # A project of its own: a burst may prepare a run, which a later prefill must not meet.
    project = make_project(base / f"burst-{seed}")
    rng = random.Random(seed)
    start = rng.choice(STARTS)
    state = prefill(project, start) if start is not None else None
    app = _app(project, state)
    async with app.run_test(size=rng.choice(SIZES)) as pilot:
        for key in keys(rng):
            if rng.random() < 0.15:
                await pilot.resize_terminal(*rng.choice(SIZES))
            await pilot.press(key)
        await pilot.pause()


def _random_keys(rng: random.Random) -> list[str]:
    return [rng.choice(KEYS) for _ in range(rng.randint(10, 40))]


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


async def test_random_key_bursts_with_resizes(burst_project: Path) -> None:
    failures: list[str] = []
    for seed in range(FIRST_SEED, FIRST_SEED + BURSTS):
        try:
            await _burst(burst_project.parent, seed, _random_keys)
        except Exception as exc:  # any crash of the app: collect, then report all
            failures.append(f"seed {seed}: {type(exc).__name__}: {exc}".splitlines()[0])
    assert not failures, "\n".join(failures)


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
