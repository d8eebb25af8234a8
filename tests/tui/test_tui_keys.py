"""Keys a person expects: destructive keys ask first, q / Ctrl+Q, ? everywhere, the
directive in $EDITOR, a multi-line directive in the confirm box, one default model,
plurals — Pilot, on the real engine and real files."""

from __future__ import annotations

import json
import stat
import sys
from typing import Any

from textual.widgets import Input, TextArea
from textual.widgets._footer import FooterKey
from tui_support import drive_to, prefill, prepared_run, settle, start_loaded, step_kind, wait_for

from okstra_core.environment import Environment
from okstra_core.session import Wizard
from okstra_core.wizard.text import text_for
from okstra_tui.screens.confirm import ConfirmScreen
from okstra_tui.screens.dialog import AskScreen, KeysHelpScreen
from okstra_tui.screens.runs import RunsScreen
from okstra_tui.screens.start import StartScreen
from okstra_tui.widgets import OptionTable
from okstra_tui.widgets.confirmation import confirmation_text

SIZE = (120, 40)


def footer(app: Any) -> dict[str, str]:
    """What the footer shows: description → key text."""
    return {k.description: k.key_display for k in app.screen.query(FooterKey)}


async def test_s_asks_before_stopping_a_lead_and_no_is_the_default(
    app_factory, project, monkeypatch
) -> None:
    from okstra_tui import run_actions

    stopped: list[str] = []
    real = run_actions.stop_lead

    def spy(run_dir, environment, text):  # records the call, then the real stop
        stopped.append(str(run_dir))
        return real(run_dir, environment, text)

    monkeypatch.setattr(run_actions, "stop_lead", spy)
    run_dir = prepared_run(project, "widget")
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await start_loaded(pilot, app)
        await pilot.press("tab")
        await settle(pilot, app)
        await pilot.press("s")
        await settle(pilot, app)
        assert isinstance(app.screen, AskScreen)
        assert run_dir.name in str(app.screen.query_one("#question").render())
        await pilot.press("enter")  # No has the focus
        await settle(pilot, app)
        assert isinstance(app.screen, StartScreen) and stopped == []
        await pilot.press("s", "n")
        await settle(pilot, app)
        assert stopped == []
        await pilot.press("s", "y")
        await wait_for(pilot, app, lambda: stopped == [str(run_dir)], "the stop")
        # The runs screen asks the same way.
        app.push_screen(RunsScreen(project, app.environment))
        await wait_for(pilot, app, lambda: bool(app.screen.rows), "the runs screen's rows")
        await pilot.press("s")
        await settle(pilot, app)
        assert isinstance(app.screen, AskScreen)
        await pilot.press("escape")
        await settle(pilot, app)
        assert isinstance(app.screen, RunsScreen) and len(stopped) == 1


async def test_a_asks_before_aborting_a_setup(app_factory, project) -> None:
    path = prefill(project, "confirm")
    app = app_factory(state=path)
    async with app.run_test(size=SIZE) as pilot:
        await drive_to(pilot, app, "confirm")
        await pilot.press("a")
        await settle(pilot, app)
        assert isinstance(app.screen, AskScreen)
        await pilot.press("enter")  # No
        await settle(pilot, app)
        assert isinstance(app.screen, ConfirmScreen)
        assert json.loads(path.read_text()).get("aborted") in (None, False)
        await pilot.press("a", "y")
        await wait_for(pilot, app, lambda: isinstance(app.screen, StartScreen), "the start")
    assert json.loads(path.read_text())["aborted"] is True


async def test_q_is_typed_in_a_text_box_and_the_footer_shows_ctrl_q(app_factory, project) -> None:
    app = app_factory(state=prefill(project, "task_type"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await wait_for(pilot, app, lambda: "Quit" in footer(app), "the footer")
        assert footer(app)["Quit"] == "q" and footer(app)["Help"] == "?"
    app = app_factory(state=prefill(project, "task_group"))
    async with app.run_test(size=SIZE) as pilot:
        await drive_to(pilot, app, "task_group")
        await wait_for(pilot, app, lambda: footer(app).get("Quit") == "Ctrl+Q", "Ctrl+Q")
        assert footer(app)["Help"] == "F1"
        await pilot.press("q", "?")
        assert app.screen.query_one("#answer", Input).value.endswith("q?")
        assert app.is_running and step_kind(app) == "task_group"
        await pilot.press("f1")  # help where `?` is typed
        await settle(pilot, app)
        assert app.screen.query("#screen-help")
        await pilot.press("ctrl+q")
        await settle(pilot, app)
    assert not app.is_running


async def test_q_quits_where_it_cannot_be_typed(app_factory, project) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await start_loaded(pilot, app)
        await pilot.press("q")
        await settle(pilot, app)
    assert not app.is_running


async def test_question_mark_lists_the_keys_of_every_screen(app_factory, project) -> None:
    prepared_run(project, "widget")
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        start = await start_loaded(pilot, app)
        await pilot.press("question_mark")
        await settle(pilot, app)
        assert isinstance(app.screen, KeysHelpScreen)
        listed = dict((d, k) for k, d in app.screen.rows)
        assert listed["Quit"] == "q / Ctrl+Q" and "All projects" in listed
        assert "Check CLIs" in listed and listed["Help"] == "? / F1"
        await pilot.press("escape")
        await settle(pilot, app)
        assert app.screen is start
        app.push_screen(RunsScreen(project, app.environment))
        await settle(pilot, app)
        await pilot.press("question_mark")
        await settle(pilot, app)
        assert isinstance(app.screen, KeysHelpScreen)
        listed = dict((d, k) for k, d in app.screen.rows)
        assert {"Back", "Stop", "Attach", "Resume", "Quit"} <= set(listed)
        await pilot.press("question_mark")  # ? closes it again
        await settle(pilot, app)
        assert isinstance(app.screen, RunsScreen)


def _editor(tmp_path, body: str) -> str:
    """An 'editor' that logs what it was given and writes `body` over it."""
    script = tmp_path / "fake-editor"
    log = tmp_path / "editor.log"
    script.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        f"open({str(log)!r}, 'w', encoding='utf-8').write(open(sys.argv[-1]).read())\n"
        f"open(sys.argv[-1], 'w', encoding='utf-8').write({body!r})\n",
        encoding="utf-8",
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


async def test_the_directive_opens_in_the_editor(app_factory, project, tmp_path, monkeypatch):
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", _editor(tmp_path, "Focus on the parser.\nKeep the API.\n"))
    path = prefill(project, "directive_pick")
    app = app_factory(state=path)
    async with app.run_test(size=SIZE) as pilot:
        await drive_to(pilot, app, "directive_pick")
        await pilot.press("down", "enter")
        await settle(pilot, app)
        assert step_kind(app) == "directive"
        await wait_for(pilot, app, lambda: "$EDITOR" in footer(app), "the editor key")
        await pilot.press(*"draft", "ctrl+o")
        await settle(pilot, app)
        assert (tmp_path / "editor.log").read_text(encoding="utf-8") == "draft"
        area = app.screen.query_one("#answer", TextArea)
        assert area.text == "Focus on the parser.\nKeep the API."
        assert not list(tmp_path.glob("okstra-directive-*"))
        await pilot.press("ctrl+s")
        await settle(pilot, app)
    assert json.loads(path.read_text())["directive"] == "Focus on the parser.\nKeep the API."


async def test_a_multi_line_directive_stays_in_the_confirm_box(app_factory, project) -> None:
    path = prefill(project, "directive_pick")
    wizard = Wizard.open(path)
    wizard.submit("write")
    wizard.submit("Focus on the parser.\nKeep the API.")
    app = app_factory(state=path)
    async with app.run_test(size=SIZE) as pilot:
        await drive_to(pilot, app, "confirm")
        screen = app.screen
        assert isinstance(screen, ConfirmScreen)
        lines = confirmation_text(screen.view.confirmation).plain.split("\n")
        first = next(i for i, line in enumerate(lines) if "Focus on the parser." in line)
        column = lines[first].index("Focus on the parser.")
        assert lines[first + 1] == " " * column + "Keep the API."


async def test_one_model_per_list_is_marked_as_the_default(app_factory, project) -> None:
    app = app_factory(state=prefill(project, "role_model"))
    async with app.run_test(size=SIZE) as pilot:
        await drive_to(pilot, app, "role_model")
        rows = app.screen.query_one("#options", OptionTable).rows
        defaults = [r for r in app.screen.prompt.options if r.meta.get("provenance")]
        marked = [r for r in rows if r.note]
        assert len(marked) == 1, [(r.value, r.note) for r in rows]
        assert marked[0].value == app.screen.prompt.default
        assert len(defaults) >= 1


def test_counts_of_one_are_singular_in_english_and_korean_keeps_its_own() -> None:
    english = text_for(Environment(env={"OKSTRA_LANG": "en"}))
    assert english.get("app.runs.title", count=1, where="p").startswith("1 run ·")
    assert english.get("app.runs.title", count=2, where="p").startswith("2 runs ·")
    korean = text_for(Environment(env={"OKSTRA_LANG": "ko"}))
    assert korean.get("app.runs.title", count=1, where="p").startswith("실행 1개")
    assert korean.get("app.runs.title", count=2, where="p").startswith("실행 2개")


def test_every_english_count_of_a_noun_has_its_singular() -> None:
    import re

    english = text_for(Environment(env={"OKSTRA_LANG": "en"}))
    plural = re.compile(r"\{count\} ([a-z]+s)\b")
    verbs = {"is", "was", "has", "does"}
    missing = [
        key
        for key, template in english.entries.items()
        if any(m not in verbs for m in plural.findall(template)) and not english.has(f"{key}_one")
    ]
    assert missing == []
