"""What the app shows from data is inert: never markup, never a control sequence.

A repository may carry any `.okstra/`, and a state file may be edited: a task key
`[/bold]` or `[red]x` (Rich markup) and an OSC 52 sequence (writes the clipboard) are
planted in a real run manifest and a real wizard state file, and the start screen and
the runs screen must show them literally — as visible escapes for the control
characters — with no MarkupError and no crash.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from rich.text import Text
from textual.content import Content
from textual.widget import Widget
from textual.widgets import DataTable, Static
from tui_support import fixed_environment, prepared_run, settle, start_loaded, wait_for

from okstra_core.paths import user_dirs
from okstra_core.session import Wizard
from okstra_tui.screens.runs import RunsScreen
from okstra_tui.widgets import OptionTable

SIZE = (160, 40)
OSC52 = "\x1b]52;c;aGk=\x07"
HOSTILE = ("[/bold]", "[red]x", OSC52)
# How each shows: the brackets as typed, every control character as its escape.
SHOWN = {"[/bold]": "[/bold]", "[red]x": "[red]x", OSC52: "\\x1b]52;c;aGk=\\x07"}


def plant_run(project: Path, index: int, value: str) -> Path:
    """A real run whose manifest's printed fields say `value`."""
    run_dir = prepared_run(project, f"t{index}")
    manifest = run_dir / "run-manifest.json"
    data = json.loads(manifest.read_text())
    data["taskKey"] = value
    data["taskType"] = value
    manifest.write_text(json.dumps(data))
    return run_dir


def plant_state(project: Path, value: str) -> Path:
    """A real wizard state file whose task key says `value`."""
    wizard = Wizard.init(None, project, host="terminal", environment=fixed_environment())
    for answer in ("new", "grp", "one"):
        wizard.submit(answer)
    data = json.loads(wizard.path.read_text())
    data["taskGroup"] = value
    data["taskId"] = value
    wizard.path.write_text(json.dumps(data))
    return wizard.path


def shown_text(widget: Widget) -> str:
    """What a widget puts on the screen, as plain text."""
    rendered = widget.render()
    if isinstance(rendered, Content | Text):
        return rendered.plain
    return str(rendered)


def assert_inert(text: str) -> None:
    assert "\x1b" not in text and "\x07" not in text, repr(text)


@pytest.fixture
def hostile(project: Path) -> dict[str, Path]:
    runs = {value: plant_run(project, i, value) for i, value in enumerate(HOSTILE)}
    states = {value: plant_state(project, value) for value in HOSTILE}
    # The wizards folder is every project's: a planted one shows in the start list.
    assert all(path.parent == user_dirs().wizards for path in states.values())
    return runs


async def test_the_start_screen_shows_planted_markup_and_escapes_literally(
    app_factory, hostile: dict[str, Path]
) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        screen = await start_loaded(pilot, app)
        runs = screen.query_one("#runs", OptionTable)
        for value, run_dir in hostile.items():
            line = str(runs.get_option(str(run_dir)).prompt)
            assert SHOWN[value] in line, (value, line)
            assert_inert(line)
        wizards = screen.query_one("#wizards", OptionTable)
        setups = "\n".join(
            str(wizards.get_option_at_index(i).prompt) for i in range(wizards.option_count)
        )
        assert_inert(setups)
        # Each run highlighted in turn: its detail line shows the planted text too.
        runs.focus()
        for _ in range(len(hostile)):
            await pilot.press("down")
            await settle(pilot, app)
            assert_inert(shown_text(screen.query_one("#run-detail", Static)))
        assert app.is_running


async def test_the_runs_screen_shows_planted_markup_and_escapes_literally(
    app_factory, hostile: dict[str, Path]
) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        app.show_runs()
        await wait_for(pilot, app, lambda: isinstance(app.screen, RunsScreen), "runs screen")
        screen: Any = app.screen
        await wait_for(pilot, app, lambda: len(screen.rows) == len(hostile), "the runs read")
        await settle(pilot, app)
        table = screen.query_one("#table", DataTable)
        for value, run_dir in hostile.items():
            cells = [
                cell.plain if isinstance(cell, Text) else str(cell)
                for cell in table.get_row(str(run_dir))
            ]
            # A manifest naming another task than its directory is a damaged run: the
            # row names the task by where the run lies, and says why it is damaged,
            # quoting the planted name literally.
            assert cells[1] == f"perf/{run_dir.parent.parent.name}", (value, cells)
            assert "damaged" in cells, (value, cells)
            assert_inert(" ".join(cells))
        details = []
        for _ in range(table.row_count):
            detail = shown_text(screen.query_one("#detail", Static))
            assert_inert(detail)
            details.append(detail)
            await pilot.press("down")
            await settle(pilot, app)
        shown = "\n".join(details)
        for value in hostile:
            assert SHOWN[value] in shown, (value, shown)
        assert app.is_running


def test_inert_text_escapes_control_characters_and_keeps_styles() -> None:
    from okstra_tui.widgets.plain import inert_text

    text = Text("run ")
    text.append("\x1b]0;x\u202e", style="bold")
    shown = inert_text(text)
    assert shown.plain == "run \\x1b]0;x\\u202e"
    assert all(span.style == "bold" for span in shown.spans if span.start >= 4)
    plain = Text("nothing to escape")
    assert inert_text(plain) is plain


async def test_a_notification_quoting_data_is_shown_literally(app_factory) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        app.notify(f"cannot open [/bold] [red]x {OSC52}", title="[/i]")
        await pilot.pause()
        (note,) = list(app._notifications)  # what the toast shows
        assert note.message == "cannot open [/bold] [red]x \\x1b]52;c;aGk=\\x07"
        assert note.title == "[/i]" and note.markup is False
        assert app.is_running


async def test_a_project_directory_named_like_markup_is_shown_literally(
    app_factory, tmp_path: Path
) -> None:
    from tui_support import make_project

    odd = make_project(tmp_path / f"[red]x{OSC52}")
    app = app_factory(project_root=odd)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert app.sub_title == "[red]x\\x1b]52;c;aGk=\\x07"
        title = str(app.screen.query_one("HeaderTitle").render())
        assert_inert(title)
        assert app.is_running
