"""What a running worker is doing: `waiting for input` from its output, `stalled` after
its provider's `stall_after` without output, and waiting on either (`--until`).

Synchronised on okstra's files and the fake's own log; "no output for two minutes" is
made by setting the log's modification time back, not by waiting two minutes.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from worker_support import World, eventually, fake

from okstra_core.catalog.activity import ActivitySpec
from okstra_core.life.workers.observe import status_label, worker_activity


@pytest.fixture
def world(tmp_path: Path) -> World:
    w = World(tmp_path)
    # analyser#1 on claude: its `[activity]` reads "Do you want to" as a question.
    w.prepare("--role-count", "analyser=2", "--role-model", "analyser=claude/sonnet-4.6")
    return w


@pytest.fixture
def hold(tmp_path: Path) -> Iterator[Path]:
    """The file that releases a holding fake worker: made at the end whatever happened
    (a failed test leaves no worker behind)."""
    path = tmp_path / "release"
    yield path
    path.touch()


def _output_has(world: World, ref: str, text: str) -> bool:
    path = world.worker_dir(ref) / "output.log"
    return path.exists() and text in path.read_text(encoding="utf-8")


def test_a_worker_silent_past_stall_after_reads_stalled(world: World, hold: Path) -> None:
    code, doc = world.start(
        "analyser#2", fake("Think.", tag="s1", hold=str(hold)), "--surface", "background"
    )
    assert code == 0, doc
    ref = doc["roleExecutionRef"]
    world.started("s1")
    eventually(lambda: _output_has(world, ref, "a note on stderr"), "its stderr in the log")
    code, seen = world.json("worker", "status", world.run)
    (worker,) = [w for w in seen["workers"] if w["roleExecutionRef"] == ref]
    assert worker["state"] == "running" and worker["activity"] == "running", worker
    code, waited = world.json(
        "worker", "wait", world.run, "analyser#2", "--until", "waiting", "--timeout", "0.2"
    )
    assert code == 124 and waited["timedOut"] and waited["reached"] == [], waited
    # Nothing written for ten minutes (more than the default 120 s).
    log = world.worker_dir(ref) / "output.log"
    old = time.time() - 600
    os.utime(log, (old, old))
    code, seen = world.json("worker", "status", world.run)
    (worker,) = [w for w in seen["workers"] if w["roleExecutionRef"] == ref]
    assert worker["activity"] == "stalled", worker
    assert worker["activityDetail"].startswith("no output for 6")
    assert worker["activityDetail"].endswith("last: fake worker: a note on stderr")
    table = world.okstra("worker", "status", world.run).stdout.decode()
    assert "stalled" in table and "no output for" in table
    # `wait --until stalled` returns at once, with status 0; the worker runs on.
    code, waited = world.json(
        "worker", "wait", world.run, "analyser#2", "--until", "stalled", "--timeout", "20"
    )
    assert code == 0 and waited["reached"] == [ref] and waited["until"] == "stalled", waited
    hold.touch()
    code, waited = world.json("worker", "wait", world.run, "analyser#2", "--timeout", "60")
    assert code == 0 and waited["workers"][0]["status"] == "exited 0", waited
    assert waited["workers"][0]["activity"] is None


def test_wait_until_a_worker_asks_a_question(world: World, hold: Path) -> None:
    code, doc = world.start(
        "analyser#1",
        fake("Edit.", tag="q1", hold=str(hold), say=["Do you want to proceed? (y/n)"]),
        "--surface",
        "background",
    )
    assert code == 0, doc
    ref = doc["roleExecutionRef"]
    code, waited = world.json(
        "worker", "wait", world.run, "analyser#1", "--until", "waiting", "--timeout", "30"
    )
    assert code == 0 and not waited["timedOut"], waited
    (worker,) = waited["workers"]
    assert worker["state"] == "running" and worker["activity"] == "waiting for input"
    assert waited["reached"] == [ref]
    hold.touch()
    code, waited = world.json(
        "worker", "wait", world.run, "analyser#1", "--until", "waiting", "--timeout", "60"
    )
    # Ended before (or while) waiting again: its exit status, as a plain wait.
    assert code == 0 and waited["workers"][0]["state"] in ("running", "exited"), waited


def test_worker_activity_from_the_log(tmp_path: Path) -> None:
    from datetime import UTC, datetime, timedelta

    ref = "role-exec-analyser-001"
    directory = tmp_path / "workers" / ref
    directory.mkdir(parents=True)
    spec = ActivitySpec(waiting=(r"\(y/n\)",), stall_after=120, idle_after=300)
    now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
    started = (now - timedelta(seconds=30)).isoformat()
    # Nothing written yet: quiet since it started.
    seen = worker_activity(tmp_path, ref, spec, started_at=started, now=now)
    assert (seen.state, seen.quiet_seconds, seen.detail) == ("running", 30, None)
    late = (now - timedelta(seconds=121)).isoformat()
    assert worker_activity(tmp_path, ref, spec, started_at=late, now=now).state == "stalled"
    log = directory / "output.log"
    log.write_text("thinking\nProceed? (y/n)\n", encoding="utf-8")
    stamp = (now - timedelta(seconds=10)).timestamp()
    os.utime(log, (stamp, stamp))
    assert (
        worker_activity(tmp_path, ref, spec, started_at=late, now=now).state == "waiting for input"
    )
    stamp = (now - timedelta(seconds=301)).timestamp()
    os.utime(log, (stamp, stamp))
    assert worker_activity(tmp_path, ref, spec, started_at=late, now=now).state == "idle"


def test_a_stopped_worker_reads_stopped() -> None:
    assert status_label("stopped", 143, None) == "stopped"
    assert status_label("stopped", None, 9) == "stopped"
    assert status_label("exited", 3, None) == "exited 3"
    assert status_label("exited", None, 9) == "exited (signal 9)"
