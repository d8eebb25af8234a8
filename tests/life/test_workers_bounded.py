"""A worker's output is bounded: its logs keep their newest part under a marker line,
and `worker result` says when a worker produced nothing."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest
from worker_support import World, eventually, fake

from okstra_core.life.workers.supervise import CappedLog

MIB = 1024 * 1024


@pytest.fixture
def world(tmp_path: Path) -> World:
    w = World(tmp_path)
    w.prepare("--role-count", "analyser=2")
    return w


def _settings(world: World, **team: object) -> None:
    path = Path(world.env["OKSTRA_HOME"]) / "config" / "config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(orjson.dumps({"team": team}))


def _dropped(data: bytes) -> int:
    first = data.split(b"\n", 1)[0].decode()
    found = re.fullmatch(r"\[okstra: ([\d,]+) bytes dropped from the start of this log.*", first)
    assert found, first
    return int(found.group(1).replace(",", ""))


def test_thirty_megabytes_of_output_are_capped(world: World) -> None:
    _settings(world, logLimitMib=1)
    total = 30 * 1000 * 1000
    # analyser#2 (gemini) leaves its answer on stdout: stdout.log is its result.
    code, doc = world.start("analyser#2", fake("Spew.", spew=total), "--surface", "background")
    assert code == 0, doc
    ref = doc["roleExecutionRef"]
    code, waited = world.json("worker", "wait", world.run, "analyser#2", "--timeout", "120")
    assert code == 0, waited
    directory = world.worker_dir(ref)
    for name in ("output.log", "stdout.log"):
        data = (directory / name).read_bytes()
        assert len(data) <= MIB, (name, len(data))
        assert _dropped(data) > total - MIB
        assert b"\nspew line " in data
    stdout = (directory / "stdout.log").read_bytes()
    body = stdout.split(b"\n", 1)[1]
    answer = b"RESULT: Spew.\n"
    assert _dropped(stdout) + len(body) == total + len(answer)  # every byte counted
    assert stdout.endswith(answer)  # its end is kept
    assert b"RESULT: Spew.\n" in (directory / "output.log").read_bytes()
    proc = world.okstra("worker", "result", world.run, "analyser#2")
    assert proc.returncode == 0 and proc.stdout == stdout


def test_a_worker_that_produced_nothing_makes_result_fail(world: World) -> None:
    code, doc = world.start("analyser#2", fake("", result=""), "--surface", "background")
    assert code == 0, doc
    code, waited = world.json("worker", "wait", world.run, "analyser#2", "--timeout", "60")
    assert code == 0, waited
    proc = world.okstra("worker", "result", world.run, "analyser#2")
    assert proc.returncode == 1 and proc.stdout.strip() == b""
    assert b"analyser#2 produced nothing (exited 0)" in proc.stderr
    code, doc = world.json("worker", "result", world.run, "analyser#2")
    assert code == 1 and doc["ok"] is False and "produced nothing" in doc["why"]
    # A stopped worker did not finish: what it wrote is given, and `result` fails.
    code, doc = world.start(
        "analyser#1", fake("Wait.", waitSignal=True, say=["half an"]), "--surface", "background"
    )
    assert code == 0, doc
    stdout = world.worker_dir(doc["roleExecutionRef"]) / "stdout.log"
    eventually(lambda: stdout.exists() and b"half an" in stdout.read_bytes(), "its half answer")
    code, stopped = world.json("worker", "stop", world.run, "analyser#1", "--grace", "5")
    assert code == 0 and stopped["worker"]["status"] == "stopped", stopped
    proc = world.okstra("worker", "result", world.run, "analyser#1")
    assert proc.returncode == 1 and b"analyser#1 did not finish (stopped)" in proc.stderr
    assert b"half an" in proc.stdout


def test_capped_log_counts_what_it_dropped(tmp_path: Path) -> None:
    path = tmp_path / "o.log"
    log = CappedLog(path, 64 * 1024)
    written = b""
    for i in range(5000):
        line = b"line %06d\n" % i
        log.write(line)
        written += line
    log.write(b"y" * 100_000)  # one chunk larger than what is kept: its end alone
    written += b"y" * 100_000
    log.close()
    data = path.read_bytes()
    assert len(data) <= 64 * 1024
    body = data.split(b"\n", 1)[1]
    assert _dropped(data) + len(body) == len(written) and written.endswith(body)


def test_worker_stop_all_stops_every_running_worker(world: World) -> None:
    for who, tag in (("analyser#1", "x1"), ("analyser#2", "x2")):
        code, doc = world.start(who, fake("w", tag=tag, waitSignal=True), "--surface", "background")
        assert code == 0, doc
        world.started(tag)
    code, stopped = world.json("worker", "stop", world.run, "--all", "--grace", "5")
    assert code == 0 and stopped["ok"], stopped
    assert sorted(w["worker"]["short"] for w in stopped["workers"]) == ["analyser#1", "analyser#2"]
    assert all(w["worker"]["status"] == "stopped" for w in stopped["workers"])
    code, again = world.json("worker", "stop", world.run, "--all")
    assert code == 0 and again["workers"] == [], again
    proc = world.okstra("worker", "stop", world.run)
    assert proc.returncode == 2 and b"name one worker, or --all" in proc.stderr
