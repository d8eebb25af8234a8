"""End to end: the installed `okstra` in a real terminal (a private tmux server).

Driven with send-keys, read with capture-pane: a whole setup, a quit, a resume from
the start screen, an edit & rewind, and a launch with `--launch none`.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tmux_driver import Terminal, terminal_env
from tui_support import make_project, okstra_cmd

from okstra_core.paths import user_dirs

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


@pytest.fixture(params=[(80, 24), (120, 40)], ids=["80x24", "120x40"])
def terminal(request, tmp_path: Path, fake_path: Path) -> Iterator[Terminal]:
    env = terminal_env(tmp_path, os.environ["PATH"])
    term = Terminal(request.param, env, make_project(tmp_path / "proj"))
    yield term
    term.close()


def enter_until(term: Terminal, text: str, limit: int = 20) -> None:
    """Press Enter (keep each default) until `text` is on the screen."""
    for _ in range(limit):
        before = term.screen()
        if text in before:
            return
        term.keys("Enter")
        # Wait for the next prompt before looking again (never press Enter twice on
        # one screen: the second could answer the prompt we are waiting for).
        header = before.splitlines()[0]
        deadline = time.monotonic() + 10
        while term.screen().splitlines()[0] == header and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.1)
    term.wait(text, timeout=5)


def test_tui_e2e_setup_quit_resume_rewind_launch(terminal: Terminal) -> None:
    command = [*okstra_cmd(), "--launch", "none"]
    terminal.start(command)
    terminal.wait("New setup")
    terminal.keys("Enter")
    terminal.wait("Which task?")
    terminal.keys("Enter")
    terminal.wait("Task group")
    terminal.type("grp")
    terminal.keys("Enter")
    terminal.wait("Task id")
    terminal.type("one")
    terminal.keys("Enter")
    terminal.wait("Brief file")
    terminal.type("nope.md")
    terminal.keys("Enter")
    terminal.wait("brief not found")  # refused inline; the screen stays usable
    terminal.keys(*["BSpace"] * 7)
    terminal.type("brief.md")
    terminal.keys("Enter")
    terminal.wait("Which phase of work?")
    terminal.keys("Enter")
    terminal.wait("How many analyser")

    # Quit: the state is already saved.
    terminal.keys("q")
    deadline = time.monotonic() + 15
    while not terminal.dead() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert terminal.dead()
    (state,) = sorted(user_dirs().wizards.glob("*.json"))
    saved = json.loads(state.read_text())
    assert saved["task_key"] == "grp/one" and saved["task_type"] == "requirements-discovery"

    # Resume from the start screen: the setup is listed under "New setup" and
    # highlighted, so Enter resumes it.
    terminal.respawn(command)
    terminal.wait("grp/one")
    terminal.keys("Enter")
    terminal.wait("How many analyser")
    enter_until(terminal, "Launch this setup?")

    # Edit & rewind to the task type, then Enter through the remembered answers.
    terminal.keys("e")
    terminal.wait("Which answer do you want to change?")
    terminal.keys("Down", "Down", "Down", "Down", "Enter")
    terminal.wait("Which phase of work?")
    enter_until(terminal, "Launch this setup?")
    terminal.wait("Preflight")

    # Launch with --launch none: the run is prepared and the start command shown.
    # Launch is its own key, taken once the screen says it is armed.
    terminal.wait("l to launch")
    terminal.keys("l")
    terminal.wait("Nothing launched", timeout=60)
    runs = terminal.cwd / ".okstra" / "tasks" / "grp" / "one" / "runs"
    assert [p.name for p in runs.iterdir()] == ["requirements-discovery-001"]
    terminal.keys("q")
    saved = json.loads(state.read_text())
    assert saved["confirmed"] is True
