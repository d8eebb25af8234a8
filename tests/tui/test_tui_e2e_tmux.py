"""End to end: the installed `okstra` in a real terminal (a private tmux server).

Driven with send-keys, read with capture-pane: a whole setup, a quit, a resume from
the start screen, an edit & rewind, and a launch with `--launch none`.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from tmux_driver import Ready, Terminal, terminal_env
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


def enter_until(term: Terminal, screen: str, *, limit: int = 20) -> Ready:
    """Press Enter (keep each default), once per ready screen, until the screen of kind
    `screen` is ready. Every Enter answers a step: the state's revision goes up."""
    last = term.last
    assert last is not None
    for _ in range(limit):
        if last.screen == screen:
            return last
        before = last.revision or 0
        last = term.submit("Enter", revision=lambda r, before=before: r is not None and r > before)
    raise AssertionError(f"no {screen} screen after {limit} Enters; at {last}")


def saved(state: Path) -> dict[str, object]:
    return json.loads(state.read_text(encoding="utf-8"))


def test_tui_e2e_setup_quit_resume_rewind_launch(terminal: Terminal) -> None:
    command = [*okstra_cmd(), "--launch", "none"]
    terminal.start(command)
    terminal.ready(screen="start", focus="wizards")
    terminal.wait("New setup")
    terminal.submit("Enter", step="task_pick", revision=1)
    terminal.wait("Which task?")
    terminal.submit("Enter", step="task_group", focus="answer")
    terminal.wait("Task group")
    terminal.type("grp")
    terminal.submit("Enter", step="task_id")
    terminal.wait("Task id")
    terminal.type("one")
    brief = terminal.submit("Enter", step="brief")
    terminal.wait("Brief file")
    # A path that does not exist is refused inline; the input keeps it, to fix in place.
    terminal.type("brief")
    refused = terminal.submit("Enter", step="brief", error=lambda e: "not found" in e)
    assert refused.revision == brief.revision  # a refused answer saves nothing
    terminal.wait("brief not found")
    terminal.type(".md")
    terminal.submit("Enter", step="task_type")
    terminal.wait("Which phase of work?")
    asked = terminal.submit("Enter", step="role-count:analyser")
    terminal.wait("How many analyser")

    # Quit: the state is already saved.
    (state,) = sorted(user_dirs().wizards.glob("*.json"))
    assert saved(state)["revision"] == asked.revision
    assert terminal.quit().revision == asked.revision
    data = saved(state)
    assert data["task_key"] == "grp/one" and data["task_type"] == "requirements-discovery"
    assert data["revision"] == asked.revision

    # Resume from the start screen: the setup is listed under "New setup" and
    # highlighted, so Enter resumes it — at the same prompt, writing nothing.
    terminal.respawn(command)
    terminal.ready(screen="start")
    terminal.wait("grp/one")
    terminal.submit("Enter", step="role-count:analyser", revision=asked.revision)
    terminal.wait("How many analyser")
    enter_until(terminal, "confirm")
    terminal.wait("Launch this setup?")

    # Edit & rewind to the task type, then Enter through the remembered answers.
    terminal.submit("e", screen="edit_target")
    terminal.wait("Which answer do you want to change?")
    terminal.press("Down", "Down", "Down", "Down")
    terminal.submit("Enter", step="task_type")
    terminal.wait("Which phase of work?")
    confirm = enter_until(terminal, "confirm")
    assert confirm.focus == "summary"  # no button has the focus: Enter never launches
    terminal.wait("Launch this setup?", "Preflight")

    # Launch with --launch none: the run is prepared and the start command shown.
    # Launch is its own key (Enter never launches); the confirm screen's ready line
    # comes once it is armed, so the key is not dropped as typed ahead.
    terminal.submit("l", screen="launch", revision=lambda r: r == (confirm.revision or 0) + 1)
    terminal.ready(screen="launch", outcome="prepared")
    runs = terminal.cwd / ".okstra" / "tasks" / "grp" / "one" / "runs"
    assert [p.name for p in runs.iterdir()] == ["requirements-discovery-001"]
    assert (runs / "requirements-discovery-001" / "run-manifest.json").is_file()
    terminal.wait("Nothing launched")
    terminal.quit()
    assert saved(state)["confirmed"] is True
