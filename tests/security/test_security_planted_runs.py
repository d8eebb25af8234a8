"""A planted run manifest never makes okstra signal a process it did not start.

Each test prepares a real run, then rewrites its leader the way a cloned repository's
author could (`planted_support.World.plant`) and drives the installed `okstra` in a
subprocess. The victim is a real process the test started itself: after `okstra stop`
it must still run, and `status` must say why it was left alone. Absurd pids (-1, 0, 1,
2**62, a string) make the lead `damaged`, never an exit 70.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from okstra_core.environment import Environment
from okstra_core.life.lead import observe
from okstra_core.life.runinfo import RunInfo, read_leader
from okstra_core.processes import process
from okstra_core.records import to_data
from tests.conftest import okstra_cmd
from tests.security.planted_support import World, alive, end, stat_start, victim


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    proc = victim()
    yield proc
    end(proc)


def _exec_lead(**fields: Any) -> dict[str, Any]:
    return {"status": "launched", "launchBackend": "exec", **fields}


def _stop_leaves_it_alone(world: World, pid: int) -> dict[str, Any]:
    code, stopped, _ = world.call("stop", world.run_id, "--json", "--grace", "1")
    assert code == 0, stopped
    assert stopped["wasRunning"] is False and stopped["steps"] == [], stopped
    assert alive(pid), "okstra signalled a process it never started"
    code, status, _ = world.call("status", world.run_id, "--json")
    assert code == 0, status
    return dict(status["lead"])


def _mismatches(pid: int) -> dict[str, dict[str, Any]]:
    me, parent = os.getpid(), os.getppid()
    return {
        "no start time": _exec_lead(processId=pid, parentProcessId=me),
        "another start time": _exec_lead(
            processId=pid, processStart="1", parentProcessId=me, parentStart=stat_start(me)
        ),
        "another parent": _exec_lead(
            processId=pid,
            processStart=stat_start(pid),
            parentProcessId=parent,
            parentStart=stat_start(parent),
        ),
        "its parent started at another time": _exec_lead(
            processId=pid, processStart=stat_start(pid), parentProcessId=me, parentStart="1"
        ),
        "no parent": _exec_lead(processId=pid, processStart=stat_start(pid)),
    }


@pytest.mark.parametrize(
    "case",
    [
        "no start time",
        "another start time",
        "another parent",
        "its parent started at another time",
        "no parent",
    ],
)
def test_a_live_process_okstra_never_started_is_never_signalled(
    world: World, sleeper: subprocess.Popen[bytes], case: str
) -> None:
    world.plant(**_mismatches(sleeper.pid)[case])
    lead = _stop_leaves_it_alone(world, sleeper.pid)
    assert lead["state"] == "refused", lead
    assert f"not a process okstra started: recorded pid {sleeper.pid}" in lead["detail"], lead
    # Nothing is recorded about a process okstra does not own.
    assert world.leader()["status"] == "launched"
    code, listed, _ = world.call("runs", "--json")
    assert code == 0 and listed["runs"][0]["lead"]["state"] == "refused", listed


@pytest.mark.parametrize("pid", [-1, 0, 1, 2**62, "abc", 1.5, True, 10**30])
def test_an_absurd_pid_is_a_damaged_lead_never_an_error(
    world: World, sleeper: subprocess.Popen[bytes], pid: object
) -> None:
    me = os.getpid()
    world.plant(
        **_exec_lead(
            processId=pid, processStart="1", parentProcessId=pid, parentStart=stat_start(me)
        )
    )
    lead = _stop_leaves_it_alone(world, sleeper.pid)
    assert lead["state"] == "damaged", lead
    assert "processId" in lead["detail"], lead
    for args in (("runs", "--json"), ("runs",), ("status", world.run_id)):
        code, out, _ = world.call(*args)
        assert code == 0, out
    code, listed, _ = world.call("runs", "--json")
    assert listed["runs"][0]["leadStatus"] == "damaged", listed


def test_a_planted_pane_pid_is_damaged_when_absurd(
    world: World, sleeper: subprocess.Popen[bytes]
) -> None:
    world.plant(
        status="launched",
        launchBackend="tmux",
        paneRef="%0",
        tmuxSocket="/tmp/nowhere",
        paneProcessId=-1,
        paneStart="x",
    )
    lead = _stop_leaves_it_alone(world, sleeper.pid)
    assert lead["state"] == "damaged" and "paneProcessId" in lead["detail"], lead
    assert "paneStart" in lead["detail"] and "expected" in lead["detail"]


def test_an_ended_lead_of_okstra_is_recorded_gone(world: World) -> None:
    # A record as launch writes it, of a lead and a foreground okstra that both ended.
    lead, parent = victim(), victim()
    fields = _exec_lead(
        processId=lead.pid,
        processStart=stat_start(lead.pid),
        parentProcessId=parent.pid,
        parentStart=stat_start(parent.pid),
    )
    end(lead)
    end(parent)
    world.plant(**fields)
    code, status, _ = world.call("status", world.run_id, "--json")
    assert code == 0 and status["lead"]["state"] == "gone", status
    assert status["lead"]["recordedNow"] is True and world.leader()["status"] == "gone"


# --------------------------------------------------------------------------- in process


def test_pids_outside_the_kernels_range_are_not_pids() -> None:
    top = process.pid_max()
    for value in (-1, 0, 1, top + 1, 2**62, 10**30, "12", 1.0, True, None):
        assert process.as_pid(value) is None, value
        assert process.proc_stat(value) is None
        assert process.check(process.Identity(pid=value, start="1")).state == "refused"
    assert process.as_pid(2) == 2 and process.as_pid(top) == top
    me = os.getpid()
    assert process.check(process.Identity(pid=me, start=stat_start(me))).matches


def test_a_refused_identity_is_never_signalled(monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[tuple[str, object]] = []
    monkeypatch.setattr(os, "kill", lambda *a: sent.append(("kill", a)))
    monkeypatch.setattr(os, "killpg", lambda *a: sent.append(("killpg", a)))
    monkeypatch.setattr(signal, "pidfd_send_signal", lambda *a: sent.append(("pidfd", a)))
    me = os.getpid()
    refused = [
        process.Identity(pid=-1, start="1"),
        process.Identity(pid=0, start="1"),
        process.Identity(pid=1, start=stat_start(1) if Path("/proc/1/stat").exists() else "1"),
        process.Identity(pid=2**62, start="1"),
        process.Identity(pid="abc", start="1"),
        process.Identity(pid=me, start=None),
        process.Identity(pid=me, start="1"),
        process.Identity(
            pid=me, start=stat_start(me), parent=1, parent_start="1", with_parent=True
        ),
    ]
    for identity in refused:
        for send in (process.send, process.send_group):
            verdict = send(identity, signal.SIGTERM)
            assert verdict.state == "refused", (identity, verdict)
            assert verdict.why.startswith("not a process okstra started"), verdict
    assert sent == []


def test_a_matching_identity_is_signalled_and_a_group_only_by_its_leader() -> None:
    proc = subprocess.Popen(["sleep", "1000"], start_new_session=True)
    other = victim()
    try:
        # Not a group leader: its group is not signalled.
        mine = process.Identity(pid=other.pid, start=stat_start(other.pid))
        assert process.send_group(mine, signal.SIGTERM).state == "refused"
        assert alive(other.pid)
        leader = process.Identity(pid=proc.pid, start=stat_start(proc.pid))
        assert process.send_group(leader, signal.SIGTERM).matches
        assert proc.wait(timeout=10) == -signal.SIGTERM
        assert process.send(leader, signal.SIGTERM).state in ("gone", "refused")
    finally:
        end(proc)
        end(other)


# --------------------------------------------------------------------------- read-only

_READ_ONLY = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'


def _read_only(world: World, *args: str) -> subprocess.CompletedProcess[bytes]:
    """`okstra <args>` with the project mounted read-only (a private mount namespace)."""
    return subprocess.run(
        ["unshare", "-rm", "sh", "-c", _READ_ONLY, str(world.project), *okstra_cmd(), *args],
        cwd=world.project,
        env=world.env,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )


def test_a_read_only_project_is_looked_at_and_the_end_is_a_note(world: World) -> None:
    if shutil.which("unshare") is None:
        pytest.skip("unshare(1) is not installed")
    probe = _read_only(world, "--version")
    if probe.returncode != 0:
        pytest.skip(f"a read-only bind mount is not permitted here: {probe.stderr[-200:]!r}")
    lead, parent = victim(), victim()
    fields = _exec_lead(
        processId=lead.pid,
        processStart=stat_start(lead.pid),
        parentProcessId=parent.pid,
        parentStart=stat_start(parent.pid),
    )
    end(lead)
    end(parent)
    world.plant(**fields)
    before = world.manifest.read_bytes()
    for args in (("status", world.run_id, "--json"), ("runs", "--json")):
        proc = _read_only(world, *args)
        assert proc.returncode == 0, proc.stderr.decode()
        doc = json.loads(proc.stdout)
        seen = doc["lead"] if "lead" in doc else doc["runs"][0]["lead"]
        assert seen["state"] == "gone" and seen["recordedNow"] is False, seen
        assert seen["note"].startswith("the end was not recorded"), seen
    assert world.manifest.read_bytes() == before
    # Writable again: the first look records it.
    code, status, _ = world.call("status", world.run_id, "--json")
    assert code == 0 and status["lead"]["recordedNow"] is True and status["lead"]["note"] is None


# --------------------------------------------------------------------------- any value

_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**64), max_value=2**64)
    | st.floats(allow_nan=False)
    | st.text(max_size=80)
    | st.sampled_from(["launched", "exec", "tmux", "%0", "@1", "/tmp/x", "1", "exited"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=8,
)
_KEYS = (
    "status",
    "launchBackend",
    "processId",
    "processStart",
    "parentProcessId",
    "parentStart",
    "paneRef",
    "paneProcessId",
    "paneStart",
    "tmuxSocket",
    "windowRef",
    "sessionRef",
    "exitStatus",
    "exitSignal",
    "exitedAt",
    "endDetail",
    "stopRequestedAt",
    "runner",
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(_KEYS), _JSON, max_size=len(_KEYS)))
def test_no_leader_a_file_can_hold_makes_a_look_raise(raw: dict[str, Any]) -> None:
    lead = read_leader(raw)
    run = RunInfo(
        run_dir=Path("/nonexistent/run"),
        manifest_path=Path("/nonexistent/run/run-manifest.json"),
        run_id="requirements-discovery-001",
        task_key="g/t",
        task_type="requirements-discovery",
        project_root=None,
        created_at=None,
        team_size=1,
        entry_mode="",
        leader=raw,
        lead=lead,
    )
    environment = Environment(env={"PATH": "/usr/bin:/bin"}, which_override=lambda _: None)
    status = observe(run, environment, record=False, sleep=lambda _: None)
    if lead.damage:
        assert status.state == "damaged" and status.detail
    assert status.state != "running" or raw.get("launchBackend") == "exec"
    assert len(to_data(status)["detail"] or "") <= 4096
