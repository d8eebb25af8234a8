"""The "?" help panel, the saved theme, and `okstra --help`."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from textual.widgets import Markdown
from tui_support import okstra_cmd, prefill, settle

from okstra_core.paths import user_dirs
from okstra_tui.resources import help_text
from okstra_tui.screens import (
    ConfirmScreen,
    PickScreen,
    PromptScreen,
    RoleAddScreen,
    RoleCountScreen,
    RoleModelScreen,
)

SIZE = (100, 32)


def footer_keys(app) -> set[str]:
    """The actions the footer offers on the current screen."""
    return {
        binding.action
        for (_node, binding, enabled, _tip) in app.active_bindings.values()
        if binding.show and enabled
    }


@pytest.mark.parametrize("screen", [RoleCountScreen, RoleAddScreen, RoleModelScreen, ConfirmScreen])
def test_each_role_and_confirm_screen_has_a_help_file(screen: type[PromptScreen]) -> None:
    assert screen.HELP and help_text(screen.HELP).startswith("## ")


async def test_question_mark_toggles_the_help_panel(app_factory, project) -> None:
    app = app_factory(state=prefill(project, "role_count"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert isinstance(app.screen, RoleCountScreen)
        assert "toggle_help" in footer_keys(app)
        assert not app.screen.query("#screen-help")
        await pilot.press("question_mark")
        await settle(pilot, app)
        panel = app.screen.query_one("#screen-help")
        assert panel.display and panel.region.height > 2
        assert "own model" in panel.query_one(Markdown).source
        # The answer keeps the focus: Enter still answers with the panel open.
        assert app.screen.focused is app.screen.query_one("#options")
        await pilot.press("f1")
        await settle(pilot, app)
        assert not panel.display
        await pilot.press("question_mark")
        await settle(pilot, app)
        assert panel.display


async def test_screens_without_a_help_file_still_list_their_keys(app_factory, project) -> None:
    app = app_factory(state=prefill(project, "task_type"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert isinstance(app.screen, PickScreen)
        assert "toggle_help" in footer_keys(app)
        await pilot.press("question_mark")
        await settle(pilot, app)
        panel = app.screen.query_one("#screen-help")
        assert "Keys of this screen" in str(panel.query_one(Markdown).source)


async def test_the_chosen_theme_is_saved_and_loaded_next_time(app_factory) -> None:
    config = user_dirs().config_file
    config.parent.mkdir(parents=True)
    config.write_text('{"language": "en"}')
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert app.theme == "textual-dark"
        assert json.loads(config.read_text()) == {"language": "en"}  # loading saves nothing
        app.theme = "nord"  # what choosing it in the command palette does
        await settle(pilot, app)
    assert json.loads(config.read_text()) == {"language": "en", "theme": "nord"}
    again = app_factory()
    async with again.run_test(size=SIZE) as pilot:
        await settle(pilot, again)
        assert again.theme == "nord"


async def test_a_broken_config_keeps_the_default_theme_and_is_not_overwritten(
    app_factory,
) -> None:
    config = user_dirs().config_file
    config.parent.mkdir(parents=True)
    config.write_bytes(b'{"theme": 7}')
    app = app_factory()
    notes: list[str] = []
    app.notify = lambda message, **_: notes.append(str(message))  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert app.theme == "textual-dark"
        assert any("Theme not loaded" in n for n in notes), notes
        app.theme = "nord"
        await settle(pilot, app)
        assert any("Theme not saved" in n and "config.json" in n for n in notes), notes
    assert config.read_bytes() == b'{"theme": 7}'


def test_okstra_help_lists_the_app_options_and_the_commands(tmp_path) -> None:
    done = subprocess.run(
        [*okstra_cmd(), "--help"],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    for option in (
        "--project-root",
        "--state",
        "--host",
        "--entry-mode",
        "--task-type",
        "--launch",
    ):
        assert option in done.stdout, option
    for command in ("models", "team", "wizard", "prepare", "report"):
        assert f"\n    {command} " in done.stdout, command
    assert done.stdout.startswith("usage: okstra [app options]")
