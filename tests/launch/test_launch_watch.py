"""An honest launch: `okstra prepare --launch tmux` watches the lead's start, in a real
tmux server of the test's own, with fake lead CLIs — one that prints an error and exits
1.5 s later, one that waits for input. Each test waits on okstra's own signals (its
process exit, the run's files), never on a sleep of its own.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import dying_lead, okstra_cmd

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

FAKE_HELP = "usage: cli --session-id --model --no-daemon --config --prompt-interactive"
# `claude` as a logged-out one behaves: it answers its version and help, then, started
# as the lead, prints an error and exits 1 after a second and a half.
DYING_LEAD = dying_lead(FAKE_HELP)


@pytest.fixture
def world(tmp_path: Path, fake_path: Path) -> Iterator[dict[str, Any]]:
    project = tmp_path / "project"
    project.mkdir()
    (project / "brief.md").write_text("Speed up the widget.\n", encoding="utf-8")
    socket = f"okstra-watch-{uuid.uuid4().hex[:10]}"
    env = {
        **os.environ,
        "FAKE_CLI_HELP": FAKE_HELP,
        "OKSTRA_TMUX_SOCKET": socket,
        # A bound no start here reaches: each watch ends on the lead's own signal.
        "OKSTRA_LAUNCH_WATCH": "60",
    }
    yield {"project": project, "env": env, "bin": fake_path, "socket": socket}
    subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True, check=False)


def _prepare(world: dict[str, Any]) -> tuple[int, dict[str, Any], str]:
    proc = subprocess.run(
        [
            *okstra_cmd(),
            *("prepare", "--project-root", str(world["project"]), "--task-group", "perf"),
            *("--task-id", "widget", "--task-type", "requirements-discovery", "--brief"),
            *("brief.md", "--host", "terminal", "--role-model", "leader=claude/opus-4.6"),
            *("--launch", "tmux"),
        ],
        cwd=world["project"],
        env=world["env"],
        capture_output=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    stderr = proc.stderr.decode()
    assert "Traceback" not in stderr, stderr
    return proc.returncode, json.loads(proc.stdout), stderr


def _timeline(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir.parent.parent / "timeline.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_lead_that_exits_is_reported_recorded_and_not_a_success(
    world: dict[str, Any],
) -> None:
    claude = world["bin"] / "claude"
    claude.write_text(DYING_LEAD, encoding="utf-8")
    claude.chmod(claude.stat().st_mode | stat.S_IXUSR)
    code, doc, stderr = _prepare(world)
    assert code == 3, (doc, stderr)
    assert doc["ok"] is False
    error = doc["error"]
    assert error.startswith("the lead exited 1 after "), error
    assert "Please run /login" in error and "okstra doctor" in error
    assert f"okstra resume {doc['runId']}" in error
    assert error in stderr
    lead_exit = doc["launch"]["leadExit"]
    assert lead_exit["exitStatus"] == 1 and lead_exit["afterSeconds"] >= 1.4
    assert any("Please run /login" in line for line in lead_exit["lastLines"])
    assert doc["launch"]["watched"] == "exited"
    # Recorded as any lead's end: the leader's status and one `lead-exited` event.
    run_dir = Path(doc["runDir"])
    manifest = json.loads((run_dir / "run-manifest.json").read_text(encoding="utf-8"))
    leader = manifest["participants"][0]
    assert leader["status"] == "exited" and leader["exitStatus"] == 1
    events = [e["event"] for e in _timeline(run_dir)]
    assert events[-2:] == ["lead-launched", "lead-exited"]
    assert any("Please run /login" in line for line in _timeline(run_dir)[-1]["lastLines"])


def test_a_lead_waiting_for_input_is_launched_without_waiting_out_the_bound(
    world: dict[str, Any],
) -> None:
    # The shared fake shows claude's input line (its `[activity] waiting` pattern) and
    # stays up: the watch ends on that screen, long before its 60 s bound.
    world["env"].update(FAKE_CLI_SAY='❯ Try "fix the widget"', FAKE_CLI_LINGER="120")
    code, doc, stderr = _prepare(world)
    assert code == 0, (doc, stderr)
    assert doc["ok"] is True and "error" not in doc
    launch = doc["launch"]
    assert launch["watched"] == "waiting for input"
    assert launch["watchedSeconds"] < 30
    assert "leadExit" not in launch
    manifest = json.loads((Path(doc["runDir"]) / "run-manifest.json").read_text("utf-8"))
    assert manifest["participants"][0]["status"] == "launched"


def _prepare_exec(world: dict[str, Any]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [
            *okstra_cmd(),
            *("prepare", "--project-root", str(world["project"]), "--task-group", "perf"),
            *("--task-id", "widget", "--task-type", "requirements-discovery", "--brief"),
            *("brief.md", "--host", "terminal", "--role-model", "leader=claude/opus-4.6"),
            *("--launch", "exec"),
        ],
        cwd=world["project"],
        env=world["env"],
        capture_output=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def test_a_foreground_lead_that_exits_at_once_gets_the_hint(world: dict[str, Any]) -> None:
    # okstra is the lead's parent: it sees the exit, and how soon after the start.
    world["env"].update(FAKE_CLI_EXIT="4", FAKE_CLI_SAY="Error: Not logged in")
    proc = _prepare_exec(world)
    stderr = proc.stderr.decode()
    assert proc.returncode == 4, stderr
    assert "okstra: the lead exited 4 after " in stderr, stderr
    assert "okstra doctor" in stderr and "okstra resume " in stderr
    # A lead that ran past the watch's bound ends without the hint.
    world["env"].update(OKSTRA_LAUNCH_WATCH="0", FAKE_CLI_EXIT="0", FAKE_CLI_LINGER="0.3")
    proc = _prepare_exec(world)
    assert proc.returncode == 0, proc.stderr.decode()
    assert "the lead exited" not in proc.stderr.decode()
