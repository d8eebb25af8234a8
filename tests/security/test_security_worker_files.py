"""A run's files never choose what okstra opens, and never make it wait.

Repros of the trust audit (second round): a worker's `launch.json` naming another
file as its result (`/proc/self/environ`, `../…`, a name under a linked directory)
made `okstra worker result` print it — okstra's environment included; a FIFO as a
worker's `output.log` hung `status`, `worker status`, `worker wait` (its own
`--timeout` too) and `worker result`. Each command runs as the installed `okstra`
in a subprocess with a timeout, so a hang is a failure.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from okstra_core.environment import Environment
from okstra_core.life.workers import control
from tests.life.worker_support import World, fake
from tests.security.test_security_read_only import immutable

SECRET = "sk-test-do-not-print-0xC0FFEE"


@pytest.fixture
def world(tmp_path: Path) -> World:
    w = World(tmp_path, OKSTRA_TEST_SECRET=SECRET)
    w.prepare("--role-count", "analyser=2")
    return w


def _finished(world: World, who: str, tag: str, **spec: Any) -> str:
    code, doc = world.start(
        who, fake(f"Result of {tag}.", tag=tag, **spec), "--surface", "background"
    )
    assert code == 0, doc
    ref = str(doc["roleExecutionRef"])
    world.recorded_end(ref)
    return ref


def _plant_launch(world: World, ref: str, **fields: str) -> None:
    path = world.worker_dir(ref) / "launch.json"
    data = orjson.loads(path.read_bytes())
    data.update(fields)
    path.write_bytes(orjson.dumps(data))


def _no_secret(proc: Any) -> None:
    assert SECRET.encode() not in proc.stdout + proc.stderr
    assert b"OKSTRA_HOME=" not in proc.stdout + proc.stderr


PLANTS = (
    {"resultFile": "/proc/self/environ"},
    {"stdoutLog": "/proc/self/environ"},
    {"resultFile": "../../run-manifest.json"},
    {"stdoutLog": "../../../../../../../../../../../proc/self/environ"},
    {"resultFile": "linked/environ"},
    {"stdoutLog": "linked/environ", "resultFile": "linked/environ", "outputLog": "linked/x"},
)


def test_result_prints_only_the_worker_s_own_output(world: World) -> None:
    ref = _finished(world, "analyser#2", "own")
    (world.worker_dir(ref) / "linked").symlink_to("/proc/self")
    launch = (world.worker_dir(ref) / "launch.json").read_bytes()
    # The repro through the installed command, human and JSON.
    _plant_launch(world, ref, resultFile="/proc/self/environ")
    for extra in ((), ("--json",)):
        proc = world.okstra("worker", "result", world.run, "analyser#2", *extra, timeout=30)
        _no_secret(proc)
        assert proc.returncode == 0, proc.stderr
        text = orjson.loads(proc.stdout)["text"] if extra else proc.stdout.decode()
        assert text == "RESULT: Result of own.\n"
    # Every other plant through the same core function, in this process.
    environment = Environment(env={**os.environ, "OKSTRA_TEST_SECRET": SECRET})
    for fields in PLANTS:
        (world.worker_dir(ref) / "launch.json").write_bytes(launch)
        _plant_launch(world, ref, **fields)
        done, data = control.result(world.run_dir, "analyser#2", environment)
        assert SECRET.encode() not in data and b"runId" not in data, fields
        assert done.text == "RESULT: Result of own.\n" and done.source == "stdout", fields
        assert done.path == str(world.worker_dir(ref) / "stdout.log")


def test_links_are_never_followed(world: World, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET, encoding="utf-8")
    ref = _finished(world, "analyser#2", "link")
    directory = world.worker_dir(ref)
    _plant_launch(world, ref, resultFile="result.md")
    for name in ("stdout.log", "result.md"):
        (directory / name).unlink(missing_ok=True)
        (directory / name).symlink_to(secret)
        proc = world.okstra("worker", "result", world.run, "analyser#2", timeout=30)
        _no_secret(proc)
        assert proc.returncode == 2 and b"symbolic link" in proc.stderr, proc.stderr
    # The worker's directory itself as a link to a directory holding a "result".
    elsewhere = tmp_path / "elsewhere"
    directory.rename(elsewhere)
    for name in ("stdout.log", "result.md"):
        (elsewhere / name).unlink()
        (elsewhere / name).write_text(SECRET, encoding="utf-8")
    directory.symlink_to(elsewhere)
    proc = world.okstra("worker", "result", world.run, "analyser#2", timeout=30)
    _no_secret(proc)
    assert proc.returncode == 2 and b"symbolic link" in proc.stderr, proc.stderr


def _fifo_instead(path: Path) -> None:
    path.unlink(missing_ok=True)
    os.mkfifo(path)


def test_a_fifo_as_output_log_hangs_nothing(world: World, tmp_path: Path) -> None:
    hold = tmp_path / "release"
    code, doc = world.start(
        "analyser#1", fake("Held.", tag="held", hold=str(hold)), "--surface", "background"
    )
    assert code == 0, doc
    held = str(doc["roleExecutionRef"])
    world.started("held")
    done = _finished(world, "analyser#2", "done")
    for ref in (held, done):
        _fifo_instead(world.worker_dir(ref) / "output.log")
    _fifo_instead(world.worker_dir(done) / "stdout.log")
    for args in (("status", world.run), ("worker", "status", world.run)):
        proc = world.okstra(*args, timeout=20)
        assert proc.returncode == 0, (args, proc.stderr)
    begun = time.monotonic()
    proc = world.okstra("worker", "wait", world.run, "analyser#1", "--timeout", "2", timeout=20)
    assert proc.returncode == 124, proc.stderr
    assert time.monotonic() - begun < 10
    proc = world.okstra("worker", "result", world.run, "analyser#2", timeout=20)
    assert proc.returncode == 2 and b"FIFO" in proc.stderr, proc.stderr
    hold.touch()
    proc = world.okstra("worker", "wait", world.run, "analyser#1", "--timeout", "60", timeout=70)
    assert proc.returncode == 0, proc.stderr


def test_a_special_or_linked_runs_index_is_ignored_with_a_note(world: World) -> None:
    """Finding 5: a FIFO, a link or a directory as `.okstra/runs-index.jsonl` made
    `okstra runs` exit 2; the runs are now listed from their directories."""
    index = world.project / ".okstra" / "runs-index.jsonl"
    assert world.okstra("runs", "--json", timeout=30).returncode == 0  # the index exists
    elsewhere = world.tmp / "elsewhere.jsonl"
    elsewhere.write_bytes(index.read_bytes())
    plants = (
        ("FIFO", lambda: os.mkfifo(index)),
        ("symbolic link", lambda: index.symlink_to(elsewhere)),
        ("directory", lambda: index.mkdir()),
    )
    for kind, plant in plants:
        if index.is_dir() and not index.is_symlink():
            index.rmdir()
        else:
            index.unlink(missing_ok=True)
        plant()
        proc = world.okstra("runs", "--json", timeout=30)
        assert proc.returncode == 0, (kind, proc.stderr)
        doc = orjson.loads(proc.stdout)
        assert [r["runId"] for r in doc["runs"]] == [world.run], kind
        assert any("runs-index.jsonl" in n and kind in n for n in doc["notes"]), doc["notes"]
        human = world.okstra("runs", timeout=30)
        assert human.returncode == 0 and world.run.encode() in human.stdout
        assert b"runs-index.jsonl" in human.stderr
    assert elsewhere.read_bytes()  # never written through the link


def test_the_team_s_looks_work_on_a_read_only_project(world: World) -> None:
    """Finding 9: `worker status`, `wait` and `result` exited 2 on a read-only project
    (`resume.json.lock: EROFS`), though reading needs no write. One worker's end is
    recorded; the other's is only in its `exit.json` (its supervisor died before it
    recorded it): both are read, nothing is written."""
    done = _finished(world, "analyser#1", "ro1")
    unseen = _finished(world, "analyser#2", "ro2", exit=3)
    manifest = world.run_dir / "run-manifest.json"
    data = orjson.loads(manifest.read_bytes())
    pref = world.execution(unseen)["participantRef"]
    for p in data["participants"]:
        if p["participantRef"] == pref:
            p["status"] = "running"
            for key in ("exitStatus", "exitSignal", "exitedAt"):
                p.pop(key, None)
    manifest.write_bytes(orjson.dumps(data))
    before = manifest.read_bytes()
    run = immutable(world.project, world.env)
    try:
        proc = run(["worker", "status", world.run, "--json"])
        assert proc.returncode == 0, proc.stderr
        states = {w["roleExecutionRef"]: w for w in orjson.loads(proc.stdout)["workers"]}
        assert states[done]["status"] == "exited 0" and states[unseen]["status"] == "exited 3"
        proc = run(["worker", "wait", world.run, "analyser#1", "analyser#2", "--timeout", "20"])
        assert proc.returncode == 3, proc.stderr
        for who, text in (("analyser#1", b"ro1"), ("analyser#2", b"ro2")):
            proc = run(["worker", "result", world.run, who])
            assert proc.returncode == 0 and text in proc.stdout, proc.stderr
    finally:
        subprocess.run(["chattr", "-R", "-i", str(world.project / ".okstra")], check=False)
    assert manifest.read_bytes() == before
