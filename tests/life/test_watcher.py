"""The run's watcher: one per run, telling each event once, ending with the team.

Each test synchronises on the watcher's own record (`watcher.json`: what it told, how
many looks it made, why it ended) and on a fake `notify-send` on the PATH of the
command that started the run, which appends each notification to a file.
"""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import uuid
from pathlib import Path
from typing import Any

import orjson
import pytest
from worker_support import World, eventually, fake

from okstra_core.documents.worker import WatcherRecord
from okstra_core.environment import Environment
from okstra_core.life.lead import record_end, update_leader
from okstra_core.life.watcher import (
    ENDED,
    NOT_STARTED,
    WATCHING,
    read_watcher,
    spawn_watcher,
    start_watcher,
    stop_watcher,
    watcher_of,
)
from okstra_core.paths import user_dirs
from okstra_core.processes import process


def _world(tmp_path: Path, *events: str) -> World:
    world = World(tmp_path, OKSTRA_WATCH_INTERVAL="0.05", TMUX_TMPDIR=str(tmp_path / "tmux"))
    notifier = world.bin / "notify-send"
    notifier.write_text(f'#!/bin/sh\necho "$@" >> {tmp_path / "told.log"}\n', encoding="utf-8")
    notifier.chmod(notifier.stat().st_mode | stat.S_IXUSR)
    if events:
        config = user_dirs(world.env).config_file
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(orjson.dumps({"notify": list(events)}).decode(), encoding="utf-8")
    world.prepare("--role-count", "analyser=1")
    return world


def _told(world: World) -> list[str]:
    path = world.tmp / "told.log"
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def _live_lead(world: World) -> subprocess.Popen[bytes]:
    """A lead running in the foreground of this test (as `run_foreground` records one)."""
    lead = subprocess.Popen(["sleep", "60"])
    me = process.recorded(lead.pid, with_parent=True)
    update_leader(
        world.run_dir,
        {
            "status": "launched",
            "launch_backend": "exec",
            "launched_at": "2026-01-01T00:00:00+00:00",
            "process_id": lead.pid,
            "process_start": me.start,
            "parent_process_id": me.parent,
            "parent_start": me.parent_start,
        },
    )
    return lead


def _ended(world: World) -> Any:
    return eventually(
        lambda: (r := read_watcher(world.run_dir)) is not None and r.ended_at and r,
        "the watcher's end",
    )


def test_worker_ended_when_asked_then_team_done_once(tmp_path: Path) -> None:
    world = _world(tmp_path, "worker-ended", "team-done")
    lead = _live_lead(world)
    try:
        code, doc = world.start("analyser#1", fake("x", exit=2), "--surface", "background")
        assert code == 0, doc
        ref = doc["roleExecutionRef"]
        # The worker start started the run's watcher; it tells the end once.
        record = eventually(
            lambda: (r := read_watcher(world.run_dir)) is not None and r.told and r,
            "worker-ended told",
        )
        assert [t.split("@")[0] for t in record.told] == [f"worker-ended:{ref}"]
        (line,) = eventually(lambda: _told(world), "notify-send")
        assert "analyser#1" in line and "exited 2" in line, line
        assert watcher_of(world.run_dir).state == WATCHING
        # Killed, it is `gone`; a new one (a resume, say) does not tell the end again.
        os.kill(record.process_id, signal.SIGKILL)
        eventually(lambda: watcher_of(world.run_dir).state == "gone", "a gone watcher")
        again = spawn_watcher(world.run_dir, Environment(env=world.env))
        eventually(
            lambda: (
                (r := read_watcher(world.run_dir)) is not None
                and r.process_id == again.pid
                and r.looks >= 3
            ),
            "the new watcher's looks",
        )
        assert len(_told(world)) == 1
        # The lead ends: the team is done, told once, and the watcher ends.
        lead.terminate()
        lead.wait()
        record_end(world.run_dir, environment=Environment(env=world.env), exit_status=0)
    finally:
        lead.kill()
    record = _ended(world)
    assert record.end_reason == "team done"
    assert [t.split("@")[0] for t in record.told] == [f"worker-ended:{ref}", "team-done"]
    lines = _told(world)
    assert len(lines) == 2 and "is done" in lines[1] and "exited 0" in lines[1], lines
    assert record.process_id == again.pid and again.wait(timeout=20) == 0
    assert watcher_of(world.run_dir).state == ENDED


def test_the_defaults_tell_no_worker_end_and_runs_shows_the_watcher(tmp_path: Path) -> None:
    world = _world(tmp_path)  # no `notify` in config.json: lead-waiting and team-done
    assert watcher_of(world.run_dir).state == NOT_STARTED
    code, doc = world.start("analyser#1", fake("x"), "--surface", "background")
    assert code == 0, doc
    # No lead okstra launched: once the worker has ended the team is done.
    record = _ended(world)
    assert record.events == ("lead-waiting", "team-done")
    assert [t.split("@")[0] for t in record.told] == ["team-done"]
    assert record.seen and record.seen[0].startswith(doc["roleExecutionRef"] + "@")
    (line,) = _told(world)
    assert "is done (no worker runs)" in line, line
    code, listed = world.json("runs")
    assert code == 0
    (run,) = listed["runs"]
    assert run["watcher"]["state"] == "ended" and run["watcher"]["endReason"] == "team done"
    assert [t.split("@")[0] for t in run["watcher"]["told"]] == ["team-done"]
    human = world.okstra("runs").stdout.decode()
    assert "WATCHER" in human.splitlines()[0] and " ended " in human, human
    status = world.okstra("status", world.run).stdout.decode()
    assert "watcher  ended (tells lead-waiting, team-done)" in status, status


def test_one_watcher_per_run_and_stop_ends_it(tmp_path: Path) -> None:
    world = _world(tmp_path)
    lead = _live_lead(world)
    environment = Environment(env=world.env)
    try:
        # Two at once: one takes the run's lock and watches, the other leaves at once.
        first = spawn_watcher(world.run_dir, environment)
        second = spawn_watcher(world.run_dir, environment)
        record = eventually(
            lambda: (r := read_watcher(world.run_dir)) is not None and r.looks >= 2 and r,
            "the watcher's looks",
        )
        watching, left = (first, second) if record.process_id == first.pid else (second, first)
        assert record.process_id == watching.pid
        assert left.wait(timeout=20) == 0 and watching.poll() is None
        # A third start (a resume, say) finds it watching and starts nothing.
        assert start_watcher(world.run_dir, environment) == WATCHING
        assert watcher_of(world.run_dir).state == WATCHING
        assert stop_watcher(world.run_dir).state == WATCHING
        assert watching.wait(timeout=20) == 0
        record = read_watcher(world.run_dir)
        assert record is not None and record.end_reason == "stopped" and record.told == ()
        assert watcher_of(world.run_dir).state == ENDED
    finally:
        lead.kill()
        lead.wait()


@pytest.mark.tmux
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_a_tmux_lead_waiting_is_told_once(tmp_path: Path) -> None:
    from life_support import base_env, make_fake_clis, okstra_json, prepare_args, set_lead

    socket = f"okstra-watch-{uuid.uuid4().hex[:12]}"
    project = tmp_path / "proj"
    project.mkdir()
    (project / "brief.md").write_text("Speed up the widget.\n", encoding="utf-8")
    bin_dir = make_fake_clis(tmp_path / "bin")
    notifier = bin_dir / "notify-send"
    told = tmp_path / "told.log"
    notifier.write_text(f'#!/bin/sh\necho "$@" >> {told}\n', encoding="utf-8")
    notifier.chmod(0o755)
    env = base_env(bin_dir, tmp_path, OKSTRA_TMUX_SOCKET=socket, OKSTRA_WATCH_INTERVAL="0.05")
    # The bottom of the real claude's empty screen: `❯`, a no-break space, a space.
    set_lead(tmp_path / "lead.json", show=["─" * 20, "❯\u00a0 ", "─" * 20], delay=60)
    try:
        code, doc = okstra_json(prepare_args(project, "tmux"), cwd=project, env=env)
        assert code == 0, doc
        run_dir = Path(doc["runDir"])
        record = eventually(
            lambda: (r := read_watcher(run_dir)) is not None and r.told and r.looks >= 10 and r,
            "lead-waiting told, and ten looks",
        )
        assert record.told == ("lead-waiting#1",) and record.waits == 1 and record.lead_waiting
        lines = told.read_text(encoding="utf-8").splitlines()
        assert len(lines) == 1 and "waits for input" in lines[0], lines
        log = (run_dir / "watcher.log").read_text(encoding="utf-8")
        assert "told lead-waiting#1: " in log and "bell" in log and "notify-send" in log, log
        code, stopped = okstra_json(
            ["stop", doc["runId"], "--grace", "1", "--json"], cwd=project, env=env
        )
        assert code == 0 and stopped["watcher"]["state"] == "watching", stopped
        record = _ended_at(run_dir)
        assert record.end_reason == "stopped"
        assert len(told.read_text(encoding="utf-8").splitlines()) == 1
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True, check=False)


def _ended_at(run_dir: Path) -> Any:
    return eventually(
        lambda: (r := read_watcher(run_dir)) is not None and r.ended_at and r, "the watcher's end"
    )


def test_a_planted_record_naming_another_process_is_never_signalled(tmp_path: Path) -> None:
    world = _world(tmp_path)
    # Another process of the user's, named with its true pid and start time.
    other = subprocess.Popen(["sleep", "60"])
    try:
        start = process.process_start(other.pid)
        assert start is not None
        planted = WatcherRecord(
            process_id=other.pid, process_start=start, started_at="2026-01-01T00:00:00+00:00",
            events=("team-done",),
        )  # fmt: skip
        (world.run_dir / "watcher.json").write_bytes(planted.to_bytes())
        assert watcher_of(world.run_dir).state == "gone"
        assert stop_watcher(world.run_dir).state == "gone"
        assert other.poll() is None  # not signalled
    finally:
        other.kill()
        other.wait()
