"""The workers' panes in real tmux: a team window of their own, never the lead's.

A private server per test; the lead (a fake CLI that stays) runs in tmux, and eight
workers start: the lead's pane keeps its size, the workers fill team windows of six
panes (`team.panesPerWindow`), and an ended worker's pane closes.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from worker_support import World, eventually, fake

from tests.conftest import okstra_cmd

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    tmux_dir = Path(tempfile.mkdtemp(prefix="okt-"))
    socket = f"t{uuid.uuid4().hex[:10]}"
    w = World(
        tmp_path, TMUX_TMPDIR=str(tmux_dir), OKSTRA_TMUX_SOCKET=socket, OKSTRA_LAUNCH_WATCH="0"
    )
    proc = w.okstra(
        "prepare",
        "--project-root",
        str(w.project),
        "--task-group",
        "perf",
        "--task-id",
        "widget",
        "--task-type",
        "requirements-discovery",
        "--brief",
        "brief.md",
        "--host",
        "terminal",
        "--launch",
        "tmux",
    )
    doc = orjson.loads(proc.stdout)
    assert proc.returncode == 0, doc
    w.run_dir = Path(doc["runDir"])
    yield w
    (tmp_path / "release").touch()
    subprocess.run(
        ["tmux", "-L", socket, "kill-server"],
        env={"TMUX_TMPDIR": str(tmux_dir), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        check=False,
    )
    shutil.rmtree(tmux_dir, ignore_errors=True)


def tmux(world: World, *args: str) -> str:
    done = subprocess.run(
        ["tmux", "-L", world.env["OKSTRA_TMUX_SOCKET"], *args],
        env={
            "TMUX_TMPDIR": world.env["TMUX_TMPDIR"],
            "PATH": "/usr/bin:/bin",
            "LC_CTYPE": "C.UTF-8",
        },
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def _panes(world: World) -> set[str]:
    """Every pane of the server (none once the server ended with its last pane)."""
    done = subprocess.run(
        ["tmux", "-L", world.env["OKSTRA_TMUX_SOCKET"], "list-panes", "-a", "-F", "#{pane_id}"],
        env={"TMUX_TMPDIR": world.env["TMUX_TMPDIR"], "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
    )
    return set(done.stdout.split())


def _start(world: World, who: str, prompt: str, *extra: str) -> dict[str, object]:
    args = ["worker", "start", world.run, who, *extra, "--surface", "tmux", "--json"]
    proc = subprocess.run(
        [*okstra_cmd(), *args, "--prompt", prompt],
        cwd=world.project,
        env=world.env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    doc: dict[str, object] = orjson.loads(proc.stdout)
    assert proc.returncode == 0, doc
    return doc


def test_eight_workers_leave_the_leads_pane_as_it_was(world: World) -> None:
    lead = world.manifest()["participants"][0]
    pane = lead["paneRef"]
    shape = "#{pane_width}x#{pane_height} #{window_id} #{window_panes}"
    before = tmux(world, "display-message", "-p", "-t", pane, shape).split()
    assert before[2] == "1"
    hold = world.tmp / "release"
    started = [_start(world, "analyser#1", fake("w0", tag="w0", hold=str(hold)))]
    for i in range(1, 8):
        prompt = fake(f"w{i}", tag=f"w{i}", hold=str(hold))
        started.append(_start(world, "analyser#1", prompt, "--again"))
    after = tmux(world, "display-message", "-p", "-t", pane, shape).split()
    assert after == before  # the same size, the same window, still alone in it
    windows: dict[str, list[str]] = {}
    for doc in started:
        window = tmux(world, "display-message", "-p", "-t", str(doc["paneRef"]), "#{window_id}")
        windows.setdefault(window.strip(), []).append(str(doc["paneRef"]))
    assert sorted(len(p) for p in windows.values()) == [2, 6], windows
    assert before[1] not in windows
    for window in windows:
        name = tmux(world, "display-message", "-p", "-t", window, "#{window_name}").strip()
        assert name.endswith("-team"), name

    def titles() -> dict[str, str]:
        shown = tmux(world, "list-panes", "-a", "-F", "#{pane_id}|#{pane_title}")
        return dict(line.split("|", 1) for line in shown.splitlines())

    labels = {str(d["paneRef"]): str(d["label"]) for d in started}
    eventually(
        lambda: {p: t for p, t in titles().items() if p in labels} == labels,
        f"each pane titled with its worker's label: {labels} {titles()}",
    )
    hold.touch()
    shorts = [str(doc["label"]).split(" ")[0] for doc in started]
    code, waited = world.json("worker", "wait", world.run, *shorts, "--timeout", "120")
    assert code == 0, waited
    # Ended, their panes close (their lines are in their logs); the lead's is as it was.
    eventually(
        lambda: (
            not set(tmux(world, "list-panes", "-a", "-F", "#{pane_id}").split())
            & {str(d["paneRef"]) for d in started}
        ),
        "the ended workers' panes to close",
    )
    assert tmux(world, "display-message", "-p", "-t", pane, shape).split() == before


def test_stop_ends_the_lead_and_every_worker(world: World) -> None:
    lead_pane = world.manifest()["participants"][0]["paneRef"]
    first = _start(world, "analyser#1", fake("a", tag="s1", waitSignal=True))
    second = _start(world, "analyser#1", fake("b", tag="s2", waitSignal=True), "--again")
    world.started("s1")
    world.started("s2")
    # --lead-only would leave them: the team's stop ends all three.
    code, stopped = world.json("stop", world.run, "--grace", "5")
    assert code == 0 and stopped["ok"] and stopped["stopped"], stopped
    assert stopped["lead"]["state"] == "stopped"
    shown = {w["worker"]["roleExecutionRef"]: w["worker"]["status"] for w in stopped["workers"]}
    assert shown == {first["roleExecutionRef"]: "stopped", second["roleExecutionRef"]: "stopped"}
    for doc in (first, second):
        assert world.participant(str(doc["roleExecutionRef"]))["status"] == "stopped"
    assert not {str(first["paneRef"]), str(second["paneRef"]), lead_pane} & _panes(world)
    code, again = world.json("stop", world.run)
    assert code == 0 and not again["wasRunning"] and again["workers"] == [], again
