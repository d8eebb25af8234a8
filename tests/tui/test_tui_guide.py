"""The first setup screen with no usable agent CLI is a short guide: each CLI that is
not ready once (its providers grouped), its install command or login step, and `r` to
check again, which moves on once a CLI that can lead is ready.

The app's own environment: PATH holds an empty directory of fake CLIs (filled by a test
to install them) and the system directories (no agent CLI there).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tui_support import fixed_environment, make_project, settle, wait_for

from okstra_core.environment import Environment
from okstra_tui.app import make_app
from okstra_tui.screens import PickScreen
from okstra_tui.screens.doctor import GuideScreen
from tests.conftest import ALL_CLIS, write_fake_cli

SIZE = (110, 40)
INSTALLS = {
    "claude": "npm install -g @anthropic-ai/claude-code@latest",
    "codex": "npm install -g @openai/codex",
    "gemini": "npm install -g @google/gemini-cli",
    "grok": "npm install -g @vibe-kit/grok-cli",
    "kimi": "uv tool install --python 3.13 kimi-cli",
}


def _app(project: Path, bin_dir: Path):  # type: ignore[no-untyped-def]
    bin_dir.mkdir(exist_ok=True)
    clock = fixed_environment()
    env = {**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin"}
    environment = Environment(env=env, now=clock.now, new_uuid=clock.new_uuid)
    return make_app(
        project_root=project, host="terminal", environment=environment, cursor_blink=False
    )


async def _new_setup(pilot, app) -> None:  # type: ignore[no-untyped-def]
    await settle(pilot, app)
    # The start line's check has run (the verdicts the guide reads are kept).
    await wait_for(pilot, app, lambda: bool(app.screen.doctor_text), "the doctor line")
    await pilot.press("enter")  # New setup
    await wait_for(pilot, app, lambda: isinstance(app.screen, GuideScreen), "the guide", 30)
    await settle(pilot, app)


def _guide(app) -> str:  # type: ignore[no-untyped-def]
    return str(app.screen.query_one("#guide").render())


async def test_no_cli_shows_each_install_once_and_r_moves_on(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    app = _app(make_project(tmp_path / "proj"), bin_dir)
    async with app.run_test(size=SIZE) as pilot:
        await _new_setup(pilot, app)
        text = _guide(app)
        for cli, install in INSTALLS.items():
            assert text.count(install) == 1, text  # each reason once, grouped by CLI
            assert f"{cli}" in text
        assert "gemini (antigravity) — not installed" in text
        assert text.index("claude") < text.index("grok")  # those that can lead first
        assert "not found on PATH" not in text and "needs 1 model" not in text
        # Still nothing: r says so and the guide stays.
        await pilot.press("r")
        await wait_for(pilot, app, lambda: not app.screen.checking, "the check", 60)
        assert isinstance(app.screen, GuideScreen)
        # Installed now: r checks again and the setup goes on at its first step.
        for name in ALL_CLIS:
            write_fake_cli(bin_dir, name)
        await pilot.press("r")
        await wait_for(
            pilot, app, lambda: not isinstance(app.screen, GuideScreen), "the first step", 60
        )
        await settle(pilot, app)
        assert isinstance(app.screen, PickScreen)
        assert app.screen.prompt.id == "task_pick" and app.screen.prompt.kind != "blocked"


async def test_a_logged_out_cli_shows_its_login_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    write_fake_cli(bin_dir, "gemini")  # the only CLI: found, working, logged out
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "no-login"))
    app = _app(make_project(tmp_path / "proj"), bin_dir)
    async with app.run_test(size=SIZE) as pilot:
        await _new_setup(pilot, app)
        text = _guide(app)
        assert "gemini (antigravity) — not logged in" in text, text
        assert 'log in: run `gemini` and choose "Login with Google"' in text
        assert INSTALLS["gemini"] not in text
        assert text.count(INSTALLS["claude"]) == 1
        await pilot.press("escape")  # closes the guide over the blocked first step
        await settle(pilot, app)
        assert isinstance(app.screen, PickScreen) and app.screen.prompt.kind == "blocked"


async def test_m_leaves_the_app_for_the_demo_team(tmp_path: Path) -> None:
    # No agent CLI: the guide offers okstra's demo team; `m` exits the app with the
    # request to run `okstra demo` (this same okstra); nothing of the project is written.
    app = _app(make_project(tmp_path / "proj"), tmp_path / "bin")
    async with app.run_test(size=SIZE) as pilot:
        await _new_setup(pilot, app)
        assert "m: watch okstra's demo team" in str(app.screen.query_one("#hint").render())
        await pilot.press("m")
        await wait_for(pilot, app, lambda: app.return_value is not None, "the app to exit", 30)
    request = app.return_value
    assert request is not None and request.run_dir is None
    assert request.argv[-1] == "demo" and Path(request.argv[0]).name in ("okstra", "python")
    assert request.cwd == tmp_path / "proj"
    assert not (tmp_path / "proj" / ".okstra" / "tasks").exists()
