"""Random key bursts at a person's speed, shared by the CI test and the stress runner.

A burst is 10–40 keys — navigation, paging, Enter/Escape, the command palette
(Ctrl+P), the app's own bindings — sent 0–80 ms apart, with terminal resizes down to
12×3 in between, into a fresh app started on the start screen (with a FIFO, a dangling
link and good wizards in the wizards folder) or on a wizard screen at some step. Keys
are *posted*, as a terminal delivers them: nothing waits for the app to be idle or
ready between two keys, so a key can reach a screen that is being dismissed, a widget
that is being mounted, a palette that is closing. An exception in any handler ends the
app and `run_burst` raises it; a burst is named by its seed, so it can be replayed.

`scripts/stress_keys.py` runs a thousand of them; the CI test runs a fixed handful.
"""

from __future__ import annotations

import asyncio
import os
import random
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from textual import events
from textual.geometry import Size
from textual.keys import REPLACED_KEYS, _get_unicode_name_from_key

from okstra_core.paths import user_dirs
from tests.tui.tui_support import FIXED_NOW, fixed_environment, make_project, prefill

KEYS = ("up", "down", "left", "right", "pageup", "pagedown", "home", "end", "enter",
        "escape", "tab", "shift+tab", "ctrl+p", "backspace", "e", "d", "y", "n", "a", "l",
        "question_mark", "f1", "space", "1", "2", "x", "ctrl+a", "delete")  # fmt: skip
SIZES = ((80, 24), (30, 8), (20, 5), (120, 40), (40, 12), (100, 30), (12, 3), (200, 6))
# Where a burst starts: the start screen, or a wizard opened at one of these steps.
STARTS = (None, None, "task_group", "task_type", "brief", "role_count", "role_model",
          "confirm")  # fmt: skip
# A person's speed: the pause before each key, in seconds.
PAUSE = (0.0, 0.08)
RESIZE_CHANCE = 0.15
FAKE_HELP = (
    "usage: cli [--session-id ID] [--model M] [--no-daemon] [--config K=V]"
    " [--prompt-interactive P] [prompt]"
)


def prepare_wizards_folder(base: Path) -> None:
    """The wizards folder every burst sees: a FIFO and a dangling link among the files."""
    wizards = user_dirs().wizards
    wizards.mkdir(parents=True, exist_ok=True)
    if not (wizards / "fifo.json").exists():
        os.mkfifo(wizards / "fifo.json")
    if not (wizards / "dangling.json").is_symlink():
        (wizards / "dangling.json").symlink_to(base / "nothing.json")


def make_app(project: Path, state: Path | None) -> Any:
    from okstra_tui.app import make_app

    return make_app(
        project_root=project,
        state=state,
        host="terminal",
        launch="none",  # a burst may reach "Prepare & launch": never start a CLI
        environment=fixed_environment(FIXED_NOW),
        cursor_blink=False,
    )


def key_event(key: str) -> events.Key:
    """The event a terminal sends for `key`, built as Textual's Pilot builds it."""
    original = REPLACED_KEYS.get(key, key)
    try:
        char: str | None = unicodedata.lookup(_get_unicode_name_from_key(original))
    except KeyError:
        char = key if len(key) == 1 else None
    return events.Key(key, char)


def resize(app: Any, width: int, height: int) -> None:
    """Resize the headless terminal as a terminal would: the new size, then the event."""
    size = Size(width, height)
    app._driver._size = size  # the headless driver's size (what Pilot.resize_terminal sets)
    app.post_message(events.Resize(size, size))


def plan(seed: int) -> tuple[str | None, tuple[int, int], list[tuple[str, Any]]]:
    """The burst of `seed`: where it starts, the first size, and its steps — ("key",
    name), ("resize", (w, h)) and ("pause", seconds)."""
    rng = random.Random(seed)
    start = rng.choice(STARTS)
    size = rng.choice(SIZES)
    steps: list[tuple[str, Any]] = []
    for _ in range(rng.randint(10, 40)):
        if rng.random() < RESIZE_CHANCE:
            steps.append(("resize", rng.choice(SIZES)))
        steps.append(("pause", rng.uniform(*PAUSE)))
        steps.append(("key", rng.choice(KEYS)))
    return start, size, steps


async def run_burst(base: Path, seed: int) -> None:
    """One burst in a fresh app and project of its own; raises what crashed the app."""
    project = make_project(base / f"burst-{seed}")
    start, size, steps = plan(seed)
    state = prefill(project, start) if start is not None else None
    app = make_app(project, state)
    async with app.run_test(size=size) as pilot:
        for kind, value in steps:
            if not app.is_running:
                break
            if kind == "pause":
                await asyncio.sleep(value)
            elif kind == "resize":
                resize(app, *value)
            else:
                app.post_message(key_event(value))
        await pilot.pause()


def crash_kind(exc: BaseException) -> str:
    """A crash's kind, for counting: the exception's type and the first line of it."""
    return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:160]


def seeds(first: int, count: int) -> Iterator[int]:
    return iter(range(first, first + count))
