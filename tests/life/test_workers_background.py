"""The workers' life on the background surface, through the installed `okstra` command.

Each test prepares a run (no lead launched) whose fake CLIs read their prompt on stdin;
it synchronises on the files okstra writes (the manifest, `exit.json`) and on the
fake's own log, never on a pause alone.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import orjson
import pytest
from worker_support import World, eventually, fake, read_jsonl

from okstra_core.life.watcher import read_watcher
from tests.conftest import okstra_cmd

CODEX = "codex/gpt-5.6-sol"


@pytest.fixture
def world(tmp_path: Path) -> World:
    w = World(tmp_path)
    # analyser#1 on codex (a result file), analyser#2 on gemini (its result on stdout).
    w.prepare("--role-count", "analyser=2", "--role-model", f"analyser={CODEX}")
    return w


def _ref(world: World, short: str) -> str:
    role, n = short.split("#")
    return next(
        e["roleExecutionRef"]
        for e in world.manifest()["roleExecutions"]
        if e["role"] == role and e["ordinal"] == int(n)
    )


def test_start_wait_result_in_the_background(world: World) -> None:
    code, doc = world.start(
        "analyser#2", fake("Analyse the widget.", tag="a1"), "--surface", "background"
    )
    assert code == 0, doc
    ref = doc["roleExecutionRef"]
    assert doc["surface"] == "background" and doc["label"].startswith("analyser#2 · ")
    seen = world.started("a1")
    # The bound model and the role's (read-only) access reach the CLI; the prompt on stdin.
    execution = world.execution(ref)
    assert execution["binding"]["executionValue"] in seen["argv"]
    assert seen["prompt"].startswith("Analyse the widget.")
    assert seen["cwd"] == str(world.project)
    assert seen["pgid"] == seen["pid"]  # the CLI leads a process group of its own
    code, waited = world.json("worker", "wait", world.run, "analyser#2", "--timeout", "60")
    assert code == 0 and waited["workers"][0]["status"] == "exited 0", waited
    participant = world.participant(ref)
    assert participant["status"] == "exited" and participant["exitStatus"] == 0
    assert participant["launchBackend"] == "background"
    assert participant["processId"] == seen["pid"] and participant["processStart"]
    assert participant["outputLog"] == f"workers/{ref}/output.log"
    assert world.execution(ref)["status"] == "exited"
    proc = world.okstra("worker", "result", world.run, "analyser#2")
    assert proc.returncode == 0 and proc.stdout == b"RESULT: Analyse the widget.\n"
    log = (world.worker_dir(ref) / "output.log").read_text(encoding="utf-8")
    assert "fake worker: working on it" in log and "a note on stderr" in log
    (started,) = [e for e in world.events("worker-started") if e["roleExecutionRef"] == ref]
    (ended,) = [e for e in world.events("worker-exited") if e["roleExecutionRef"] == ref]
    assert started["surface"] == "background" and ended["exitStatus"] == 0
    assert "fake worker: done" in ended["lastLines"]


def test_a_result_file_and_a_failure_exit(world: World) -> None:
    code, doc = world.start(
        "analyser#1", fake("Check the codex side.", tag="a2", exit=3), "--surface", "background"
    )
    assert code == 0, doc
    ref = doc["roleExecutionRef"]
    seen = world.started("a2")
    result_file = seen["argv"][seen["argv"].index("--output-last-message") + 1]
    assert result_file == doc["resultFile"] == str(world.worker_dir(ref) / "result.md")
    assert "read-only" in seen["argv"]  # an analyser does not write
    code, waited = world.json("worker", "wait", world.run, "analyser#1")
    assert code == 3 and waited["workers"][0]["status"] == "exited 3"
    assert world.exited(ref)["exitStatus"] == 3
    assert world.participant(ref)["exitStatus"] == 3
    code, result = world.json("worker", "result", world.run, "analyser#1")
    assert code == 0 and result["source"] == "result-file"
    assert result["text"] == "RESULT: Check the codex side.\n"


def test_wait_returns_the_first_non_zero_and_times_out_with_124(world: World) -> None:
    hold = world.tmp / "release"
    world.start("analyser#1", fake("one", tag="a1", exit=0), "--surface", "background")
    world.start(
        "analyser#2", fake("two", tag="a2", exit=5, hold=str(hold)), "--surface", "background"
    )
    world.started("a2")
    started = time.monotonic()
    proc = world.okstra("worker", "wait", world.run, "analyser#1", "analyser#2", "--timeout", "0.5")
    assert proc.returncode == 124
    assert time.monotonic() - started < 30
    assert b"still running: analyser#2" in proc.stderr
    code, doc = world.json("worker", "wait", world.run, "analyser#1", "analyser#2", "--any")
    assert code == 0 and doc["workers"][0]["state"] == "exited"
    hold.touch()
    code, doc = world.json("worker", "wait", world.run, "analyser#1", "analyser#2")
    assert code == 5, doc


def test_refusals_change_nothing(world: World, tmp_path: Path) -> None:
    def snapshot() -> dict[str, bytes]:
        root = world.project / ".okstra"
        return {str(p): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}

    before = snapshot()
    cases = [
        (["worker", "start", world.run, "analyser#9", "--prompt", "x"], "no worker 'analyser#9'"),
        (["worker", "start", world.run, "leader#1", "--prompt", "x"], "the lead of the run"),
        (["worker", "start", world.run, "role-exec-leader-001", "--prompt", "x"], "the lead"),
        (["worker", "start", world.run, "analyser#1", "--prompt", "  "], "the prompt is empty"),
        (
            ["worker", "start", world.run, "--role", "fixer", "--model", CODEX, "--prompt", "x"],
            "not a dynamic role",
        ),
        (
            ["worker", "start", world.run, "analyser#1", "--prompt", "x", "--surface", "bogus"],
            "invalid choice",
        ),
    ]
    for args, message in cases:
        proc = world.okstra(*args)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert message in proc.stderr.decode(), proc.stderr
    # A missing CLI: the fake codex is gone from PATH.
    (world.bin / "codex").rename(tmp_path / "codex-away")
    proc = world.okstra("worker", "start", world.run, "analyser#1", "--prompt", "x")
    assert proc.returncode == 2 and b"not on PATH" in proc.stderr, proc.stderr
    assert snapshot() == before


def test_a_running_worker_is_refused_and_again_starts_a_new_attempt(world: World) -> None:
    hold = world.tmp / "release"
    code, first = world.start(
        "analyser#1", fake("first", tag="t1", hold=str(hold)), "--surface", "background"
    )
    assert code == 0, first
    world.started("t1")
    manifest = world.manifest()
    proc = world.okstra("worker", "start", world.run, "analyser#1", "--prompt", "again")
    assert proc.returncode == 2 and b"already running" in proc.stderr
    assert world.manifest() == manifest
    code, again = world.start(
        "analyser#1", fake("second", tag="t2"), "--again", "--surface", "background"
    )
    assert code == 0, again
    assert again["roleExecutionRef"] == "role-exec-analyser-003"  # the next ordinal
    assert again["sourceRoleExecutionRef"] == first["roleExecutionRef"]
    new = world.execution(again["roleExecutionRef"])
    assert new["sourceRoleExecutionRef"] == first["roleExecutionRef"]
    assert new["modelRef"] == world.execution(first["roleExecutionRef"])["modelRef"]
    assert new["executionLabel"] == f"analyser#3 · {new['modelRef']}"
    assert (
        world.participant(again["roleExecutionRef"])["participantRef"]
        != world.participant(first["roleExecutionRef"])["participantRef"]
    )
    hold.touch()
    code, _ = world.json("worker", "wait", world.run, "analyser#1", "analyser#3")
    assert code == 0
    # Ended without --again: refused too.
    proc = world.okstra("worker", "start", world.run, "analyser#1", "--prompt", "x")
    assert proc.returncode == 2 and b"already ran" in proc.stderr


def test_stop_terms_then_kills_the_group(world: World) -> None:
    code, doc = world.start(
        "analyser#1",
        fake("stubborn", tag="s", waitSignal=True, ignoreTerm=True),
        "--surface",
        "background",
    )
    assert code == 0, doc
    seen = world.started("s")
    eventually(lambda: world.participant(doc["roleExecutionRef"]).get("processId"), "pid recorded")
    code, stopped = world.json("worker", "stop", world.run, "analyser#1", "--grace", "0.5")
    assert code == 0, stopped
    assert stopped["wasRunning"] and stopped["worker"]["state"] == "stopped"
    assert any("SIGTERM" in s for s in stopped["steps"]) and any(
        "SIGKILL" in s for s in stopped["steps"]
    )
    signals = [e["signal"] for e in read_jsonl(world.log) if e["event"] == "signal"]
    assert signal.SIGTERM in signals
    participant = world.participant(doc["roleExecutionRef"])
    assert participant["status"] == "stopped" and participant["exitSignal"] == signal.SIGKILL
    with pytest.raises(ProcessLookupError):
        os.kill(seen["pid"], 0)
    code, again = world.json("worker", "stop", world.run, "analyser#1")
    assert code == 0 and again["wasRunning"] is False


def test_a_worker_whose_processes_vanished_is_recorded_lost(world: World) -> None:
    code, doc = world.start(
        "analyser#1", fake("doomed", tag="d", waitSignal=True), "--surface", "background"
    )
    assert code == 0, doc
    ref = doc["roleExecutionRef"]
    seen = world.started("d")
    participant = eventually(
        lambda: (p := world.participant(ref)).get("processId") and p, "recorded"
    )
    # The machine "reboots": the run's watcher, the supervisor and the CLI die without
    # a word.
    watcher = eventually(lambda: read_watcher(world.run_dir), "the run's watcher")
    os.kill(watcher.process_id, signal.SIGKILL)
    os.kill(participant["parentProcessId"], signal.SIGKILL)
    os.killpg(seen["pid"], signal.SIGKILL)
    eventually(
        lambda: (
            not Path(f"/proc/{participant['parentProcessId']}").exists()
            or Path(f"/proc/{participant['parentProcessId']}/stat").read_text().split(") ")[1][0]
            == "Z"
        ),
        "supervisor gone",
    )
    code, status = world.json("worker", "status", world.run)
    assert code == 0
    row = next(w for w in status["workers"] if w["roleExecutionRef"] == ref)
    assert row["state"] == "lost" and row["recordedNow"] is True
    assert world.participant(ref)["status"] == "lost"
    assert not (world.worker_dir(ref) / "exit.json").exists()
    (event,) = [e for e in world.events("worker-exited") if e["roleExecutionRef"] == ref]
    assert event["status"] == "lost"
    code, waited = world.json("worker", "wait", world.run, "analyser#1")
    assert code == 1 and waited["workers"][0]["state"] == "lost"


def test_ten_workers_started_at_once_are_all_recorded(tmp_path: Path) -> None:
    world = World(tmp_path)
    world.prepare("--role-count", "analyser=1")
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
                "background",
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
    docs = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
        docs.append(orjson.loads(out))
    refs = {d["roleExecutionRef"] for d in docs}
    assert len(refs) == 10
    for ref in refs:
        world.recorded_end(ref)
    manifest = world.manifest()
    recorded = {e["roleExecutionRef"] for e in manifest["roleExecutions"]}
    assert refs <= recorded
    assert len({p["participantRef"] for p in manifest["participants"]}) == len(
        manifest["participants"]
    )
    assert all(world.participant(r)["status"] == "exited" for r in refs)
    assert len([e for e in world.events("worker-started") if e["roleExecutionRef"] in refs]) == 10
    # The event follows the manifest's record (under the same lock): wait for the last.
    eventually(
        lambda: (
            len([e for e in world.events("worker-exited") if e["roleExecutionRef"] in refs]) == 10
        ),
        "ten worker-exited events",
    )
    tags = {e["tag"] for e in read_jsonl(world.log) if e["event"] == "started"}
    assert tags == {f"j{i}" for i in range(10)}


def test_sigkill_of_okstra_during_start_leaves_a_parseable_manifest(world: World) -> None:
    hold = world.tmp / "release"
    proc = subprocess.Popen(
        [
            *okstra_cmd(),
            "worker",
            "start",
            world.run,
            "analyser#1",
            "--surface",
            "background",
            "--json",
            "--prompt",
            fake("killed", tag="k", hold=str(hold)),
        ],
        cwd=world.project,
        env=world.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    # As soon as the worker's CLI runs, okstra may be anywhere in its record: kill it.
    seen = world.started("k")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    orjson.loads((world.run_dir / "run-manifest.json").read_bytes())  # parseable
    ref = "role-exec-analyser-001"
    # The supervisor records the start even if okstra did not.
    eventually(lambda: world.participant(ref).get("processId") == seen["pid"], "the start recorded")
    code, status = world.json("worker", "status", world.run)
    assert code == 0
    assert next(w for w in status["workers"] if w["roleExecutionRef"] == ref)["state"] == "running"
    hold.touch()
    assert world.recorded_end(ref)["exitStatus"] == 0


def test_result_shows_one_mib_unless_full(world: World, tmp_path: Path) -> None:
    big = "x" * (1024 * 1024 + 4096)
    task = tmp_path / "task.md"
    task.write_text(fake("Produce a lot.", result=big), encoding="utf-8")
    proc = world.okstra(
        "worker",
        "start",
        world.run,
        "analyser#1",
        "--prompt-file",
        str(task),
        "--surface",
        "background",
    )
    assert proc.returncode == 0, proc.stderr
    code, _ = world.json("worker", "wait", world.run, "analyser#1", "--timeout", "60")
    assert code == 0
    shown = world.okstra("worker", "result", world.run, "analyser#1")
    assert shown.returncode == 0 and shown.stdout == big.encode()[: 1024 * 1024]
    assert b"showed 1,048,576 of 1,052,673 bytes" in shown.stderr
    assert b"result.md (or --full)" in shown.stderr
    whole = world.okstra("worker", "result", world.run, "analyser#1", "--full")
    assert whole.stdout == (big + "\n").encode() and whole.stderr == b""
    code, doc = world.json("worker", "result", world.run, "analyser#1")
    assert doc["truncated"] is True and doc["size"] == len(big) + 1
    assert len(doc["text"]) == 1024 * 1024
