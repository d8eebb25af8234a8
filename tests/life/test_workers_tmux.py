"""The workers' life in real tmux: a private server per test (in a private socket
directory of its own), through the installed `okstra` command."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from worker_support import World, eventually, fake, read_jsonl

from tests.conftest import okstra_cmd

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    # A short directory: a socket path is limited to ~100 bytes.
    tmux_dir = Path(tempfile.mkdtemp(prefix="okw-"))
    socket = f"w{uuid.uuid4().hex[:10]}"
    w = World(tmp_path, TMUX_TMPDIR=str(tmux_dir), OKSTRA_TMUX_SOCKET=socket)
    w.prepare("--role-count", "analyser=2", "--role-model", "analyser=codex/gpt-5.6-sol")
    yield w
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


def _settings(world: World, **team: object) -> None:
    """`config.json`'s `team` of this test's OKSTRA_HOME."""
    path = Path(world.env["OKSTRA_HOME"]) / "config" / "config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(orjson.dumps({"team": team}))


def test_a_worker_runs_in_a_titled_pane_and_its_end_is_recorded(world: World) -> None:
    _settings(world, keepEndedPanes=True)
    hold = world.tmp / "release"
    code, doc = world.start(
        "analyser#1", fake("Watch me.", tag="p1", hold=str(hold), exit=4), "--surface", "tmux"
    )
    assert code == 0, doc
    ref, pane = doc["roleExecutionRef"], doc["paneRef"]
    assert doc["surface"] == "tmux" and pane.startswith("%")
    seen = world.started("p1")
    participant = eventually(lambda: (p := world.participant(ref)).get("processId") and p, "pid")
    assert participant["paneRef"] == pane and participant["tmuxSocket"] == doc["tmuxSocket"]
    assert participant["processId"] == seen["pid"]
    assert tmux(world, "display-message", "-p", "-t", pane, "#{pane_pid}").strip() == str(
        participant["parentProcessId"]
    )
    # The pane is titled with the label; a person sees the worker's output in it.
    eventually(
        lambda: (
            tmux(world, "display-message", "-p", "-t", pane, "#{pane_title}").strip()
            == doc["label"]
        ),
        "the pane's title",
    )
    eventually(lambda: "working on it" in tmux(world, "capture-pane", "-p", "-t", pane), "output")
    code, status = world.json("worker", "status", world.run)
    row = next(w for w in status["workers"] if w["roleExecutionRef"] == ref)
    assert row["state"] == "running" and row["surface"] == "tmux"
    hold.touch()
    assert world.exited(ref)["exitStatus"] == 4
    code, waited = world.json("worker", "wait", world.run, "analyser#1")
    assert code == 4 and waited["workers"][0]["status"] == "exited 4"
    proc = world.okstra("worker", "result", world.run, "analyser#1")
    assert proc.stdout == b"RESULT: Watch me.\n"
    # Asked to (`keepEndedPanes`), the pane stays, dead, with the worker's last lines.
    assert tmux(world, "display-message", "-p", "-t", pane, "#{pane_dead}").strip() == "1"
    assert "ended" in tmux(world, "capture-pane", "-p", "-t", pane)


def test_an_ended_workers_pane_closes_its_lines_kept_in_its_log(world: World) -> None:
    tmux(world, "new-session", "-d", "-s", "mine")  # the server outlives the worker's
    code, doc = world.start("analyser#1", fake("Bye.", tag="c1"), "--surface", "tmux")
    assert code == 0, doc
    ref, pane = doc["roleExecutionRef"], doc["paneRef"]
    code, waited = world.json("worker", "wait", world.run, "analyser#1", "--timeout", "60")
    assert code == 0, waited
    eventually(
        lambda: pane not in tmux(world, "list-panes", "-a", "-F", "#{pane_id}").split(),
        "the ended worker's pane to close",
    )
    log = (world.worker_dir(ref) / "output.log").read_text(encoding="utf-8")
    assert "fake worker: done" in log


def test_workers_share_one_tiled_window_and_stop_closes_a_pane(world: World) -> None:
    first = world.start("analyser#1", fake("one", tag="w1", waitSignal=True), "--surface", "tmux")[
        1
    ]
    second = world.start("analyser#2", fake("two", tag="w2", waitSignal=True), "--surface", "tmux")[
        1
    ]
    world.started("w1")
    world.started("w2")
    assert first["windowRef"] == second["windowRef"]
    window = tmux(world, "display-message", "-p", "-t", first["paneRef"], "#{window_id}").strip()
    panes = tmux(world, "list-panes", "-t", window, "-F", "#{pane_id}").split()
    assert {first["paneRef"], second["paneRef"]} <= set(panes)
    eventually(lambda: world.participant(second["roleExecutionRef"]).get("processId"), "pid")
    code, stopped = world.json("worker", "stop", world.run, "analyser#2", "--grace", "5")
    assert code == 0 and stopped["worker"]["state"] == "stopped", stopped
    # Its pane is gone: it closed with its supervisor, or the stop closed it.
    assert second["paneRef"] not in tmux(world, "list-panes", "-a", "-F", "#{pane_id}").split()
    signals = [e for e in read_jsonl(world.log) if e["event"] == "signal"]
    assert signals and all(e["signal"] == 15 for e in signals)
    assert world.participant(first["roleExecutionRef"])["status"] == "running"


def test_by_default_a_running_tmux_server_gets_the_pane(world: World) -> None:
    # No server yet: the background surface.
    code, doc = world.start("analyser#1", fake("bg", tag="b"))
    assert code == 0 and doc["surface"] == "background", doc
    tmux(world, "new-session", "-d", "-s", "mine")
    code, doc = world.start("analyser#2", fake("pane", tag="t"))
    assert code == 0 and doc["surface"] == "tmux", doc


def test_ten_workers_at_once_in_tmux(world: World) -> None:
    procs = [
        subprocess.Popen(
            [
                *okstra_cmd(),
                "worker",
                "start",
                world.run,
                "analyser#1",
                "--again",
                "--surface",
                "tmux",
                "--json",
                "--prompt",
                fake(f"job {i}", tag=f"j{i}"),
            ],
            cwd=world.project,
            env=world.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for i in range(10)
    ]
    refs = set()
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
        refs.add(orjson.loads(out)["roleExecutionRef"])
    assert len(refs) == 10
    for ref in refs:
        assert world.recorded_end(ref)["exitStatus"] == 0
    eventually(
        lambda: (
            len([e for e in world.events("worker-exited") if e["roleExecutionRef"] in refs]) == 10
        ),
        "ten worker-exited events",
    )
