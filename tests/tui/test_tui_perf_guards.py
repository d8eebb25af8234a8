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
import importlib
from pathlib import Path
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


def added_sources(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Where each source added to a stylesheet came from (`file: Class.DEFAULT_CSS`)."""
    added: list[str] = []
    original = Stylesheet.add_source

    def recorded(self: Stylesheet, css: str, read_from: Any = None, **kwargs: Any) -> None:
        if read_from is not None and not self.has_source(*read_from):
            added.append(f"{read_from[0]}: {read_from[1]}")
        original(self, css, read_from, **kwargs)

    monkeypatch.setattr(Stylesheet, "add_source", recorded)
    return added


async def test_stylesheet_parsed_once_through_a_whole_setup(
    app_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    parses = count_calls(monkeypatch, Stylesheet, "parse")
    added = added_sources(monkeypatch)
    app = app_factory(launch="none")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert type(app.screen).__name__ == "StartScreen"
        at_start, late = parses[0], len(added)
        assert at_start >= 1
        await drive_to(pilot, app, "confirm")
        await answer_current(pilot, app)  # Launch
        await wait_for(
            pilot, app, lambda: isinstance(app.screen, LaunchScreen), "the launch screen"
        )
        await settle(pilot, app)
        assert parses[0] == at_start, (
            "Textual parsed the stylesheet again after the first screen, because CSS was "
            f"added late: {added[late:]}. okstra_tui/_preload_css.py preloads the classes "
            "of okstra_tui.screens and okstra_tui.widgets by itself; a part Textual "
            "composes inside one of its widgets must be added to PARTS there."
        )


def test_every_screen_and_widget_is_preloaded() -> None:
    """Found by walking the packages: nothing to register by hand."""
    import inspect

    from textual.widget import Widget

    import okstra_tui.screens
    import okstra_tui.widgets
    from okstra_tui._preload_css import preloaded

    classes = set(preloaded())
    for package in (okstra_tui.screens, okstra_tui.widgets):
        for path in Path(package.__file__).parent.glob("*.py"):
            module = importlib.import_module(f"{package.__name__}.{path.stem}")
            for _, cls in inspect.getmembers(module, inspect.isclass):
                if issubclass(cls, Widget) and cls.__module__ == module.__name__:
                    assert cls in classes, cls
    assert not any(c.__name__ == "DataTable" for c in classes)  # the runs screen's: late


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
