"""What keeps screen changes cheap, counted rather than timed (Pilot, real engine).

- The stylesheet is parsed once: no new screen or widget of a whole setup (start,
  every prompt, confirm, launch) makes Textual parse it again.
- The footer is rebuilt only when the keys it shows change, and still shows the keys
  of the focused widget when they do.
- What the app loaded before its first screen is kept out of the collector's full
  passes while the app runs, and given back when it ends.
"""

from __future__ import annotations

import gc
from typing import Any

import pytest
from textual.css.stylesheet import Stylesheet
from textual.widgets import Footer
from tui_support import answer_current, drive_to, prefill, settle, step_kind, wait_for

from okstra_tui.screens.launch import LaunchScreen
from okstra_tui.widgets import HistoryPanel

SIZE = (120, 40)


def count_calls(monkeypatch: pytest.MonkeyPatch, cls: type, name: str) -> list[int]:
    """Count calls of `cls.name` (the original still runs); the count is `[n]`."""
    calls = [0]
    original = getattr(cls, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(cls, name, counted)
    return calls


async def test_stylesheet_parsed_once_through_a_whole_setup(
    app_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    parses = count_calls(monkeypatch, Stylesheet, "parse")
    app = app_factory(launch="none")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert type(app.screen).__name__ == "StartScreen"
        at_start = parses[0]
        assert at_start >= 1
        await drive_to(pilot, app, "confirm")
        await answer_current(pilot, app)  # Launch
        await wait_for(
            pilot, app, lambda: isinstance(app.screen, LaunchScreen), "the launch screen"
        )
        await settle(pilot, app)
        assert parses[0] == at_start, "a screen or widget added CSS after the start"


async def test_footer_rebuilt_only_when_its_keys_change(
    app_factory: Any, project: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = prefill(project, "role_count")
    app = app_factory(state=path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert step_kind(app) == "role_count"
        screen = app.screen
        footer = screen.query_one(Footer)

        def shown() -> set[str]:
            return {key.description for key in footer.query("FooterKey")}

        assert "Back" in shown()
        composes = count_calls(monkeypatch, Footer, "compose")
        for _ in range(3):
            screen.refresh_bindings()  # same keys: nothing to rebuild
            await pilot.pause()
        assert composes[0] == 0
        await pilot.press("ctrl+r")  # into the history panel: its keys are shown
        await wait_for(
            pilot, app, lambda: isinstance(screen.focused, HistoryPanel), "the history focus"
        )
        await wait_for(pilot, app, lambda: "Rewind here" in shown(), "the panel's keys")
        assert composes[0] >= 1


async def test_startup_heap_frozen_while_the_app_runs(app_factory: Any, project: Any) -> None:
    assert gc.get_freeze_count() == 0
    app = app_factory(state=prefill(project, "task_group"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0
