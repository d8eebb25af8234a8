"""End to end in a real terminal (a private tmux server), the conventions a person
relies on: a partial brief path completes with Tab; Tab then Enter goes forward, never
back; keys typed ahead of the confirm screen never launch; the launch preview shows the
lead command `okstra prepare --dry-run` prints for the same setup.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tmux_driver import Terminal, terminal_env
from tui_support import make_project, okstra_cmd

from okstra_core.paths import user_dirs

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


@pytest.fixture(params=[(80, 24), (120, 40)], ids=["80x24", "120x40"])
def terminal(request, tmp_path: Path, fake_path: Path) -> Iterator[Terminal]:
    env = terminal_env(tmp_path, os.environ["PATH"])
    # A short project path, so that the whole lead command fits the panel at 80x24.
    short = Path(tempfile.mkdtemp(prefix="ok-", dir="/tmp"))
    term = Terminal(request.param, env, make_project(short / "p"))
    yield term
    term.close()
    shutil.rmtree(short, ignore_errors=True)


def state_file() -> Path:
    (path,) = sorted(user_dirs().wizards.glob("*.json"))
    return path


def saved() -> dict[str, Any]:
    return json.loads(state_file().read_text(encoding="utf-8"))


def squeeze(text: str) -> str:
    """Whitespace (the panel wraps long lines) and session ids (minted per plan) out."""
    return re.sub(r"\s+", "", UUID.sub("<id>", text))


def dry_run_of_this_setup(terminal: Terminal, tmp_path: Path) -> dict[str, Any]:
    """`okstra prepare --dry-run` of the same setup: a copy of the state file, confirmed
    headless (the app's own file stays unconfirmed)."""
    copy = tmp_path / "copy.json"
    copy.write_bytes(state_file().read_bytes())
    env = {**terminal.env}

    def run(*args: str) -> dict[str, Any]:
        done = subprocess.run(
            [*okstra_cmd(), *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=terminal.cwd,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        result: dict[str, Any] = json.loads(done.stdout)
        return result

    run("wizard", "step", "--state", str(copy), "--answer", "confirm")
    return run("prepare", "--state", str(copy), "--dry-run", "--launch", "none")


HINT = "a new session id is minted at launch"


SCROLLBAR = " ▁▂▃▄▅▆▇█▔▀▐▌"


def preview_column(screen: str, column: int | None = None) -> tuple[list[str], int]:
    """The preview body's lines from `column` (default: where "Lead command" begins), each
    without the scrollbar at its end; and that column."""
    lines = screen.splitlines()
    # The preview's body: below its title, above the buttons.
    first = next(i for i, line in enumerate(lines) if "Launch preview" in line) + 1
    last = next(i for i, line in enumerate(lines) if i >= first and "Abort" in line)
    lines = lines[first:last]
    if column is None:
        column = next(line.index("Lead command") for line in lines if "Lead command" in line)
    return [line[column:].rstrip(SCROLLBAR) for line in lines], column


def stitched(top: list[str], bottom: list[str]) -> list[str]:
    """Two views of one scrolled text as one: `bottom` continues `top` where they overlap."""
    top = [line for line in top if line.strip()]
    bottom = [line for line in bottom if line.strip()]
    for size in range(min(len(top), len(bottom)), 0, -1):
        if top[-size:] == bottom[:size]:
            return top + bottom[size:]
    raise AssertionError(f"the two views do not overlap:\n{top}\n{bottom}")


def test_completion_tab_typed_ahead_and_preview(terminal: Terminal, tmp_path: Path) -> None:
    terminal.start([*okstra_cmd(), "--launch", "none"])
    terminal.ready(screen="start")
    terminal.submit("Enter", step="task_pick")
    terminal.submit("Enter", step="task_group", focus="answer")
    terminal.type("grp")
    terminal.submit("Enter", step="task_id")
    terminal.type("one")
    brief = terminal.submit("Enter", step="brief")
    terminal.wait("Brief file")

    # A partial path, then Tab: completed to the project's brief.md; Enter submits it
    # and goes forward (Tab never moves to the history panel, so Enter never rewinds).
    terminal.type("br")
    terminal.press("Tab")
    terminal.wait("brief.md")
    after = terminal.submit("Enter", step="task_type")
    assert after.revision == (brief.revision or 0) + 1
    state = saved()
    assert state["brief_path"] == "brief.md"
    assert [a["step"] for a in state["answered"]][-1] == "brief"

    # On a choice screen too: Tab, then Enter chooses here and goes forward.
    terminal.press("Tab")
    forward = terminal.submit("Enter", step="role-count:analyser")
    assert forward.revision == (after.revision or 0) + 1
    assert saved()["task_type"] == "requirements-discovery"

    last = forward
    for _ in range(12):
        if last.step == "directive_pick":
            break
        before = last.revision or 0
        last = terminal.submit("Enter", revision=lambda r, b=before: r is not None and r > b)
    assert last.step == "directive_pick", last

    # Enter answers "no directive"; the launch keys behind it are typed ahead of the
    # confirm screen (sent at once, not waiting for it): they must do nothing.
    terminal.tmux("send-keys", "-t", terminal.pane, "Enter", "l", "Enter", "l", "y", "Enter")
    terminal.armed = False
    terminal.ready(screen="confirm")
    terminal.wait("Launch this setup?")
    # The next signal after the confirm screen is the key pressed now, on the screen
    # now seen: had a typed-ahead key launched, the launch screen would come first.
    terminal.submit("e", screen="edit_target")
    assert saved()["confirmed"] is not True
    assert not (terminal.cwd / ".okstra" / "tasks").exists()
    terminal.submit("Escape", screen="confirm")

    # The preview shows what `okstra prepare --dry-run` would run for this setup.
    plan = dry_run_of_this_setup(terminal, tmp_path)
    files = f"{len(plan['files'])} files"
    # Planned (the preflight ticks), then the preview: collapsed where space is short,
    # its title cut to the room it has — open it, and its title says it all.
    shown = terminal.wait("✓ report-writer#1", "Launch preview")
    if "▶ Launch preview" in shown:
        terminal.submit("p", screen="confirm", focus="preview-body")
    top, column = preview_column(terminal.wait("Lead command", files))
    if HINT not in "".join(top):  # a small terminal: the rest is below, End shows it
        terminal.press("End")
        bottom, _ = preview_column(terminal.wait(HINT), column)
        top = stitched(top, bottom)
    start = next(i for i, line in enumerate(top) if "Lead command" in line)
    end = next(i for i, line in enumerate(top) if HINT in line)
    shown_command = "".join(top[start + 1 : end])
    argv = list(plan["leadArgv"])
    argv[0] = Path(argv[0]).name  # shown by its bare name: PATH finds that same program
    expected = f"cd {shlex.quote(str(terminal.cwd))} && {shlex.join(argv)}"
    assert squeeze(shown_command) == squeeze(expected), (shown_command, expected)
    # Nothing was prepared by looking.
    assert not (terminal.cwd / ".okstra" / "tasks").exists()
