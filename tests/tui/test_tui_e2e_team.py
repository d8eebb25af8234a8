"""End to end: the runs screen of the installed `okstra`, in a real terminal (a private
tmux server), shows a worker started after it opened — with no key pressed.

The worker is started by the test through the core (as the lead would, from another
process); the app only looks. Keys go after the app's ready lines; what it shows by
itself is read with capture-pane.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from tmux_driver import Terminal, terminal_env
from tui_support import make_project, okstra_cmd

from okstra_core.cli.roleargs import request_from_argv
from okstra_core.environment import Environment
from okstra_core.life.actions import worker_start
from okstra_core.prepare import prepare
from tests.life.worker_support import fake, make_worker_clis

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


def member_line(screen: str, short: str) -> str:
    return next((line for line in screen.splitlines() if line.strip().startswith(short)), "")


def test_tui_e2e_runs_screen_shows_a_new_worker_with_no_key(
    tmp_path: Path, fake_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = make_worker_clis(tmp_path / "bin")
    path = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
    monkeypatch.setenv("PATH", path)
    for name in ("TMUX", "TMUX_PANE"):
        monkeypatch.delenv(name, raising=False)
    project = make_project(tmp_path / "proj")
    argv = [
        "--project-root", str(project), "--task-group", "perf", "--task-id", "live",
        "--task-type", "requirements-discovery", "--brief", "brief.md", "--host", "terminal",
    ]  # fmt: skip
    env = Environment.real()
    run_dir = Path(prepare(request_from_argv(argv, env), launch="none", environment=env).run_dir)

    term = Terminal((120, 40), terminal_env(tmp_path, path), project)
    try:
        term.start([*okstra_cmd(), "--launch", "none"])
        term.ready(screen="start")
        term.submit("C-p", screen="CommandPalette")
        term.type("Runs")
        term.wait("This project's runs")  # the palette found the command
        # The palette closes (the start screen may say it is ready again), then the
        # command opens the runs screen.
        got = term.submit("Enter")
        while got.screen != "RunsScreen":
            assert got.screen == "start", got
            got = term.ready()
        term.wait_for(lambda s: "prepared" in member_line(s, "analyser#1"), "the team")
        # From here on no key is pressed: the screen follows the worker by itself.
        hold = tmp_path / "release"
        worker_start(
            run_dir, env, prompt=fake("Look.", hold=str(hold)), who="analyser#1",
            surface="background",
        )  # fmt: skip
        term.wait_for(lambda s: "running" in member_line(s, "analyser#1"), "the worker running")
        hold.write_text("go")
        term.wait_for(lambda s: "exited 0" in member_line(s, "analyser#1"), "the worker ended")
        assert "prepared" in member_line(term.screen(), "analyser#2")
    finally:
        term.close()
