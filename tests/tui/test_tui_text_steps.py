"""Text steps: path completion, the brief in $EDITOR, the multi-line directive, and
task names in any script — Pilot, on the real engine and real files."""

from __future__ import annotations

import json
import os
import stat
import sys

from textual.widgets import Input, TextArea
from tui_support import drive_to, prefill, settle, step_kind

from okstra_tui.screens.text import ProjectPathSuggester

SIZE = (100, 30)


async def test_the_suggester_completes_paths_relative_to_the_project(tmp_path) -> None:
    root = tmp_path / "p"
    (root / "docs" / "briefs").mkdir(parents=True)
    (root / "docs" / "briefs" / "login.md").write_text("x")
    (root / "docs" / "brief-old.md").write_text("x")
    (root / ".hidden.md").write_text("x")
    (root / "README.md").write_text("x")
    suggest = ProjectPathSuggester(root).get_suggestion
    assert await suggest("doc") == "docs/"
    assert await suggest("docs/b") == "docs/brief"  # as far as the matches agree
    assert await suggest("docs/briefs/") == "docs/briefs/login.md"
    assert await suggest("R") == "README.md"
    assert await suggest(".h") == ".hidden.md"
    assert await suggest("zzz") is None
    assert await suggest(str(root / "READ")) == str(root / "README.md")


async def test_tab_completes_the_brief_path(app_factory, project) -> None:
    (project / "docs").mkdir()
    (project / "docs" / "login-brief.md").write_text("# Login\n", encoding="utf-8")
    app = app_factory(state=prefill(project, "brief"))
    async with app.run_test(size=SIZE) as pilot:
        await drive_to(pilot, app, "brief")
        box = app.screen.query_one("#answer", Input)
        await pilot.press(*"do")
        await pilot.pause()
        await pilot.press("tab")
        assert box.value == "docs/"
        await pilot.pause()
        await pilot.press("tab")
        assert box.value == "docs/login-brief.md"
        await pilot.press("enter")
        await settle(pilot, app)
        assert step_kind(app) == "task_type"
        assert app.wizard.state.brief_path == "docs/login-brief.md"


def _editor(tmp_path, body: str) -> str:
    """A small 'editor': writes `body` into the file it is given, logs its argv."""
    script = tmp_path / "fake-editor"
    log = str(tmp_path / "editor.log")
    script.write_text(
        f"#!{sys.executable}\n"
        "import json, os, sys\n"
        f"open(sys.argv[-1], 'w', encoding='utf-8').write({body!r})\n"
        f"line = json.dumps([os.getcwd(), *sys.argv[1:]])\n"
        f"open({log!r}, 'a').write(line + '\\n')\n",
        encoding="utf-8",
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


async def test_the_brief_is_created_in_the_editor_then_submitted(
    app_factory, project, tmp_path, monkeypatch
) -> None:
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", _editor(tmp_path, "# New brief\n\nMake login faster.\n"))
    app = app_factory(state=prefill(project, "brief"))
    async with app.run_test(size=SIZE) as pilot:
        await drive_to(pilot, app, "brief")
        await pilot.press(*"notes/login.md", "ctrl+o")
        await settle(pilot, app)
        written = project / "notes" / "login.md"
        assert written.read_text(encoding="utf-8").startswith("# New brief")
        log = [json.loads(line) for line in (tmp_path / "editor.log").read_text().splitlines()]
        assert log == [[str(project), str(written)]]
        box = app.screen.query_one("#answer", Input)
        assert box.value == "notes/login.md" and box.has_focus
        await pilot.press("enter")
        await settle(pilot, app)
        assert app.wizard.state.brief_path == "notes/login.md"


async def test_the_editor_refuses_a_path_outside_the_project(
    app_factory, project, tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv("EDITOR", _editor(tmp_path, "x"))
    app = app_factory(state=prefill(project, "brief"))
    async with app.run_test(size=SIZE) as pilot:
        await drive_to(pilot, app, "brief")
        await pilot.press(*"../outside.md", "ctrl+o")
        await settle(pilot, app)
        assert not (tmp_path / "editor.log").exists()
        assert not (project.parent / "outside.md").exists()
        assert step_kind(app) == "brief"


async def test_the_directive_takes_several_lines_and_ctrl_s_submits(app_factory, project) -> None:
    path = prefill(project, "directive_pick")
    app = app_factory(state=path)
    async with app.run_test(size=SIZE) as pilot:
        await drive_to(pilot, app, "directive_pick")
        await pilot.press("down", "enter")
        await settle(pilot, app)
        assert step_kind(app) == "directive"
        area = app.screen.query_one("#answer", TextArea)
        assert area.has_focus
        await pilot.press(*"Focus on", "enter", *"the parser.")
        assert step_kind(app) == "directive"  # Enter is a new line here
        await pilot.press("ctrl+s")
        await settle(pilot, app)
        assert step_kind(app) != "directive"
        assert json.loads(path.read_text())["directive"] == "Focus on\nthe parser."


async def test_task_names_in_korean_stay_readable(app_factory, project) -> None:
    app = app_factory(state=prefill(project, "task_group"))
    async with app.run_test(size=SIZE) as pilot:
        await drive_to(pilot, app, "task_group")
        app.screen.query_one("#answer", Input).value = "로그인 개선"
        await pilot.press("enter")
        await settle(pilot, app)
        assert step_kind(app) == "task_id"
        assert app.wizard.state.task_group == "로그인-개선"
        app.screen.query_one("#answer", Input).value = "첫 단계"
        await pilot.press("enter")
        await settle(pilot, app)
        assert app.wizard.state.task_id == "첫-단계"
        assert os.sep not in app.wizard.state.task_group
