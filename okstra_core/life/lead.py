"""The lead after launch: is it running, how did it end, stop it, attach to it.

okstra runs no daemon. Whenever it next looks at a run (`okstra runs`, `status`,
`resume`, `stop`, the app's launch screen), it checks the lead where it was started:

* tmux: the pane recorded at launch (`paneRef` on the tmux server at `tmuxSocket`).
  The window keeps `remain-on-exit`, so a lead that exited leaves a dead pane with its
  exit status and last lines;
* foreground (`exec` backend): okstra stayed the parent of the CLI and records the
  exit itself; a recorded process that is gone without a record was lost with it.

The first look that sees the end records it, once: a `lead-exited` event in the task's
`timeline.jsonl` and the leader participant's status (`exited`, `stopped` or `gone`)
in `run-manifest.json` — the one mutation a prepared run allows. Writers of the
participant take the run's resume-sheet lock, so concurrent looks record it once.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..environment import Environment
from ..errors import DataFileError, OkstraError
from ..launch import RESUME_JSON, tmux_base
from ..launch.foreground import run_child
from ..prepare import runfiles
from ..records import dataclass, field
from ..store import FileLock, append_line
from ..tasks import resolve_inside
from .report import load_run_manifest
from .resume import resume_run

LEADER_REF = "participant-001"
# A leader whose status is one of these has ended; its end is recorded.
ENDED = ("exited", "stopped", "gone")
# A leader whose launch failed (the CLI never ran, or exited at once): recorded by prepare.
LAUNCH_FAILED = "launch-failed"
# How many of a dead pane's last lines the timeline keeps.
LAST_LINES = 20
_LOCK_TIMEOUT = 5.0
_TMUX_TIMEOUT = 10.0
# tmux 3.3a can report a pane dead a moment before it knows the exit status.
_STATUS_GRACE = 2.0
_GONE_MARKERS = ("can't find", "no server running", "error connecting", "no such file")


# --------------------------------------------------------------------------- reading runs


@dataclass(frozen=True)
class RunInfo:
    """What `okstra runs` and `status` show of one run, read from its run manifest."""

    run_dir: Path
    manifest_path: Path
    run_id: str
    task_key: str
    task_type: str
    project_root: Path | None
    created_at: datetime | None
    team_size: int
    entry_mode: str
    leader: Mapping[str, Any]

    @property
    def ref(self) -> str:
        """`<group>/<id>/<run-id>`: how the run is named from anywhere in its project."""
        return f"{self.task_key}/{self.run_id}" if self.task_key else self.run_id

    @property
    def timeline(self) -> Path:
        return self.run_dir.parent.parent / runfiles.TIMELINE


def _participants(manifest: Mapping[str, Any]) -> list[Any]:
    top = manifest.get("participants")
    if isinstance(top, list):
        return top
    nested = manifest.get("executionManifest")
    inner = nested.get("participants") if isinstance(nested, Mapping) else None
    return inner if isinstance(inner, list) else []


def _role_executions(manifest: Mapping[str, Any]) -> list[Any]:
    top = manifest.get("roleExecutions")
    if isinstance(top, list):
        return top
    nested = manifest.get("executionManifest")
    inner = nested.get("roleExecutions") if isinstance(nested, Mapping) else None
    return inner if isinstance(inner, list) else []


def leader_of(manifest: Mapping[str, Any], *, path: Path) -> dict[str, Any]:
    """The leader participant (`participant-001`) of a run manifest.

    Raises:
        DataFileError: the manifest has no such participant.
    """
    for item in _participants(manifest):
        if isinstance(item, dict) and item.get("participantRef") == LEADER_REF:
            return item
    raise DataFileError(f"no participant {LEADER_REF}", path=path, field="participants")


def _time(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def read_run(run_dir: Path) -> RunInfo:
    """Read a run directory's manifest (checked: identity version 2, a leader).

    Raises:
        DataFileError: a missing or malformed run manifest.
    """
    path, manifest = load_run_manifest(run_dir)
    root = manifest.get("projectRoot")
    return RunInfo(
        run_dir=path.parent,
        manifest_path=path,
        run_id=str(manifest.get("runId") or path.parent.name),
        task_key=str(manifest.get("taskKey") or ""),
        task_type=str(manifest.get("taskType") or ""),
        project_root=Path(root) if isinstance(root, str) and root else None,
        created_at=_time(manifest.get("createdAt")),
        team_size=len(_role_executions(manifest)),
        entry_mode=str(manifest.get("entryMode") or ""),
        leader=leader_of(manifest, path=path),
    )


def resume_command(run: RunInfo) -> str:
    """The command that resumes the lead, from any directory."""
    return f"okstra resume {shlex.quote(str(run.run_dir))} --exec"


# --------------------------------------------------------------------------- status


@dataclass(frozen=True)
class LeadStatus:
    """The lead of a run as okstra sees it now.

    Attributes:
        state: `prepared` (not launched), `host-session` (the host session is the
            lead), `running`, `launched` (started; okstra cannot tell whether it still
            runs), `exited`, `stopped`, `gone` (ended unseen), `launch-failed`
            (prepare could not start it; `detail` says why), `unknown`.
        backend: the launch backend (`tmux`, `exec`), when launched.
        exit_status: the CLI's exit status, when known.
        signal: the signal that ended it, when known.
        exited_at: when it ended (ISO), when known.
        session_id: the lead's session id; None while pending discovery.
        pending_id: launched, and the session id is not known yet.
        window_ref / pane_ref / tmux_socket / process_id: where it runs.
        detail: why the state is what it is, when not obvious.
        recorded: this look recorded the end (first look after it).
    """

    state: str
    backend: str | None = None
    exit_status: int | None = None
    signal: int | None = None
    exited_at: str | None = None
    session_id: str | None = None
    pending_id: bool = False
    window_ref: str | None = None
    pane_ref: str | None = None
    tmux_socket: str | None = None
    process_id: int | None = None
    detail: str | None = None
    recorded: bool = False

    @property
    def alive(self) -> bool:
        return self.state == "running"

    @property
    def ended(self) -> bool:
        return self.state in ENDED

    def label(self) -> str:
        """`running`, `exited 1`, `pending id`, `prepared`, … (the `runs` column)."""
        if self.state in ("exited", "stopped"):
            if self.signal is not None:
                return f"{self.state} (signal {self.signal})"
            if self.exit_status is not None:
                return f"{self.state} {self.exit_status}"
            return self.state
        if self.state == "running" and self.pending_id:
            return "running, pending id"
        if self.state == "launched" and self.pending_id:
            return "pending id"
        if self.state == LAUNCH_FAILED:
            return "launch failed"
        return self.state

    def to_json(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "label": self.label(),
            "backend": self.backend,
            "exitStatus": self.exit_status,
            "signal": self.signal,
            "exitedAt": self.exited_at,
            "sessionId": self.session_id,
            "pendingId": self.pending_id,
            "windowRef": self.window_ref,
            "paneRef": self.pane_ref,
            "tmuxSocket": self.tmux_socket,
            "processId": self.process_id,
            "detail": self.detail,
            "recordedNow": self.recorded,
        }


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _base_status(leader: Mapping[str, Any], entry_mode: str) -> LeadStatus:
    status = leader.get("status")
    backend = _str(leader.get("launchBackend"))
    common: dict[str, Any] = {
        "backend": backend,
        "session_id": _str(leader.get("sessionRef")),
        "window_ref": _str(leader.get("windowRef")),
        "pane_ref": _str(leader.get("paneRef")),
        "tmux_socket": _str(leader.get("tmuxSocket")),
        "process_id": _int(leader.get("processId")),
    }
    if status in ENDED:
        return LeadStatus(
            state=str(status),
            exit_status=_int(leader.get("exitStatus")),
            signal=_int(leader.get("exitSignal")),
            exited_at=_str(leader.get("exitedAt")),
            detail=_str(leader.get("endDetail")),
            **common,
        )
    if status == "launched":
        return LeadStatus(state="launched", pending_id=common["session_id"] is None, **common)
    if status == LAUNCH_FAILED:
        return LeadStatus(state=LAUNCH_FAILED, detail=_str(leader.get("endDetail")), **common)
    if entry_mode == "current-session" or leader.get("runner") == "current-session":
        return LeadStatus(state="host-session", **common)
    return LeadStatus(state="prepared", **common)


# --------------------------------------------------------------------------- tmux


def tmux_for(socket: str | None, environment: Environment) -> list[str]:
    """tmux on the server at `socket` (the one recorded at launch), else okstra's default."""
    if socket:
        return [environment.which("tmux") or "tmux", "-S", socket]
    return tmux_base(environment)


def _tmux(
    base: Sequence[str], args: Sequence[str], environment: Environment
) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(
            [*base, *args],
            env=dict(environment.env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=_TMUX_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None


@dataclass(frozen=True)
class PaneProbe:
    """One look at a tmux pane. `found` None = okstra cannot tell (no tmux, tmux failed)."""

    found: bool | None
    dead: bool = False
    exit_status: int | None = None
    signal: int | None = None
    dead_at: str | None = None
    pid: int | None = None
    problem: str | None = None


_PANE_FORMAT = "#{pane_dead}|#{pane_dead_status}|#{pane_dead_signal}|#{pane_dead_time}|#{pane_pid}"


def probe_pane(
    pane: str,
    socket: str | None,
    environment: Environment,
    *,
    sleep: Callable[[float], None] = time.sleep,
) -> PaneProbe:
    """Whether the pane exists, and — when its program ended — how."""
    if environment.which("tmux") is None:
        return PaneProbe(found=None, problem="tmux is not installed")
    if socket and not Path(socket).exists():
        return PaneProbe(found=False, problem=f"the tmux server ({socket}) is not running")
    base = tmux_for(socket, environment)
    deadline = time.monotonic() + _STATUS_GRACE
    polls = 0
    while True:
        done = _tmux(base, ["display-message", "-p", "-t", pane, _PANE_FORMAT], environment)
        if done is None:
            return PaneProbe(found=None, problem="tmux did not answer")
        if done.returncode != 0:
            err = done.stderr.strip()
            if any(marker in err.lower() for marker in _GONE_MARKERS):
                return PaneProbe(found=False, problem=err)
            return PaneProbe(found=None, problem=err or f"tmux exit {done.returncode}")
        dead, status, sig, when, pid = [*done.stdout.strip().split("|"), "", "", "", ""][:5]
        if dead != "1":
            return PaneProbe(found=True, pid=_to_int(pid))
        if status or sig or time.monotonic() >= deadline:
            at = None
            if when.isdigit():
                at = datetime.fromtimestamp(int(when), UTC).isoformat(timespec="seconds")
            return PaneProbe(
                found=True,
                dead=True,
                exit_status=_to_int(status),
                signal=_to_int(sig),
                dead_at=at,
                pid=_to_int(pid),
            )
        polls += 1
        if polls % 4 == 0:
            # tmux 3.3a can miss the SIGCHLD of a fast-exiting child until it reaps
            # another one: make it fork and reap a child.
            _tmux(base, ["run-shell", "true"], environment)
        sleep(0.05)


def _to_int(value: str) -> int | None:
    try:
        return int(value)
    except ValueError:
        return None


def pane_lines(
    pane: str, socket: str | None, environment: Environment, count: int = LAST_LINES
) -> list[str]:
    """The pane's last `count` lines (scrollback included), without tmux's dead-pane line."""
    done = _tmux(
        tmux_for(socket, environment),
        ["capture-pane", "-p", "-J", "-S", "-500", "-t", pane],
        environment,
    )
    if done is None or done.returncode != 0:
        return []
    lines = [line.rstrip() for line in done.stdout.splitlines()]
    lines = [line for line in lines if not line.startswith("Pane is dead")]
    while lines and not lines[-1]:
        lines.pop()
    return lines[-count:]


# --------------------------------------------------------------------------- processes


def process_start(pid: int) -> str | None:
    """The kernel's start time of `pid` (Linux `/proc`), to tell it from a reused pid."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    # Field 22 (starttime); the command name (field 2) may contain spaces and ")".
    rest = raw.rpartition(")")[2].split()
    return rest[19] if len(rest) > 19 else None


def process_alive(pid: int, started: str | None) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    if started is not None:
        now = process_start(pid)
        if now is not None and now != started:
            return False  # the pid was reused by another process
    return True


# --------------------------------------------------------------------------- recording


def participant_lock(run_dir: Path) -> FileLock:
    """The lock every writer of a launched run's participants takes (with resume)."""
    return FileLock(run_dir / RESUME_JSON, timeout=_LOCK_TIMEOUT)


def _timeline_path(run_dir: Path) -> Path:
    troot = run_dir.parent.parent
    return resolve_inside(troot, troot / runfiles.TIMELINE, what="the task timeline")


def update_leader(run_dir: Path, changes: Mapping[str, Any]) -> None:
    """Set leader participant keys (under the participant lock)."""
    with participant_lock(run_dir):
        runfiles.update_participant(run_dir / runfiles.RUN_MANIFEST, LEADER_REF, changes)


def record_end(
    run_dir: Path,
    *,
    environment: Environment,
    exit_status: int | None,
    signal_number: int | None = None,
    exited_at: str | None = None,
    lines: Sequence[str] = (),
    how: str = "exited",
    detail: str | None = None,
) -> bool:
    """Record the lead's end once: a `lead-exited` event and the leader's status.

    Args:
        run_dir: the run.
        environment: the clock.
        exit_status: the CLI's exit status, when known.
        signal_number: the signal that ended it, when known.
        exited_at: when it ended (ISO); default now.
        lines: the last lines it showed (tmux), for the timeline.
        how: `exited`, or `gone` (ended unseen). A leader whose stop was requested
            is recorded `stopped`.
        detail: a short explanation (e.g. why it is `gone`).

    Returns:
        True when this call recorded it; False when it was recorded already.
    """
    now = environment.now().isoformat(timespec="seconds")
    with participant_lock(run_dir):
        path, manifest = load_run_manifest(run_dir)
        leader = leader_of(manifest, path=path)
        if leader.get("status") in ENDED:
            return False
        state = "stopped" if leader.get("stopRequestedAt") else how
        event: dict[str, Any] = {
            "at": now,
            "event": "lead-exited",
            "runId": str(manifest.get("runId") or run_dir.name),
            "participantRef": LEADER_REF,
            "status": state,
            "backend": leader.get("launchBackend"),
            "exitStatus": exit_status,
            "signal": signal_number,
            "exitedAt": exited_at or now,
            "windowRef": leader.get("windowRef"),
            "paneRef": leader.get("paneRef"),
            "lastLines": list(lines),
        }
        if detail:
            event["detail"] = detail
        append_line(_timeline_path(run_dir), event)
        runfiles.update_participant(
            path,
            LEADER_REF,
            {
                "status": state,
                "exitStatus": exit_status,
                "exitSignal": signal_number,
                "exitedAt": exited_at or now,
                **({"endDetail": detail} if detail else {}),
            },
        )
        return True


def _ended(base: LeadStatus, run_dir: Path, recorded: bool) -> LeadStatus:
    """The status after a record: read back what was recorded (by this look or another)."""
    info = read_run(run_dir)
    again = _base_status(info.leader, info.entry_mode)
    return LeadStatus(**{**again.__dict__, "recorded": recorded}) if again.ended else base


def observe(
    run: RunInfo,
    environment: Environment,
    *,
    record: bool = True,
    sleep: Callable[[float], None] = time.sleep,
) -> LeadStatus:
    """Look at the lead of `run`; record its end the first time it is seen.

    Args:
        run: from `read_run`.
        environment: PATH (tmux), env and clock.
        record: write the end when seen (False: only report it).
        sleep: the pause between tmux polls (tests).
    """
    base = _base_status(run.leader, run.entry_mode)
    if base.state != "launched":
        return base
    if base.backend == "tmux" and base.pane_ref:
        probe = probe_pane(base.pane_ref, base.tmux_socket, environment, sleep=sleep)
        if probe.found is None:
            return _with(base, state="unknown", detail=probe.problem)
        if probe.found and not probe.dead:
            return _with(base, state="running")
        if probe.found:
            lines = pane_lines(base.pane_ref, base.tmux_socket, environment)
            ended = _with(
                base,
                state="exited",
                exit_status=probe.exit_status,
                signal=probe.signal,
                exited_at=probe.dead_at,
            )
            if not record:
                return ended
            done = record_end(
                run.run_dir,
                environment=environment,
                exit_status=probe.exit_status,
                signal_number=probe.signal,
                exited_at=probe.dead_at,
                lines=lines,
            )
            return _ended(ended, run.run_dir, done)
        detail = f"its tmux pane {base.pane_ref} ({base.window_ref}) was closed: {probe.problem}"
        gone = _with(base, state="gone", detail=detail)
        if not record:
            return gone
        done = record_end(
            run.run_dir, environment=environment, exit_status=None, how="gone", detail=detail
        )
        return _ended(gone, run.run_dir, done)
    if base.backend == "exec" and base.process_id is not None:
        started = _str(run.leader.get("processStart"))
        parent = _int(run.leader.get("parentProcessId"))
        if process_alive(base.process_id, started):
            return _with(base, state="running")
        if parent is not None and process_alive(parent, _str(run.leader.get("parentStart"))):
            # The okstra that started it is recording its exit right now.
            return _with(base, state="running")
        detail = "the foreground okstra that started it ended without recording its exit"
        gone = _with(base, state="gone", detail=detail)
        if not record:
            return gone
        done = record_end(
            run.run_dir, environment=environment, exit_status=None, how="gone", detail=detail
        )
        return _ended(gone, run.run_dir, done)
    return base


def _with(base: LeadStatus, **changes: Any) -> LeadStatus:
    return LeadStatus(**{**base.__dict__, **changes})


# --------------------------------------------------------------------------- stop


@dataclass(frozen=True)
class StopOutcome:
    """What `stop` did."""

    run: RunInfo
    before: LeadStatus
    after: LeadStatus
    steps: tuple[str, ...] = field(default=())

    @property
    def stopped(self) -> bool:
        return self.before.alive and not self.after.alive

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": not self.after.alive,
            "runId": self.run.run_id,
            "run": self.run.ref,
            "runDir": str(self.run.run_dir),
            "wasRunning": self.before.alive,
            "stopped": self.stopped,
            "steps": list(self.steps),
            "lead": self.after.to_json(),
            "resumeCommand": resume_command(self.run),
        }


def _wait(until: Callable[[], bool], seconds: float, sleep: Callable[[float], None]) -> bool:
    deadline = time.monotonic() + seconds
    while True:
        if until():
            return True
        if time.monotonic() >= deadline:
            return False
        sleep(0.05)


def stop(
    run: RunInfo,
    environment: Environment,
    *,
    grace: float = 10.0,
    sleep: Callable[[float], None] = time.sleep,
) -> StopOutcome:
    """Ask the lead to stop (Ctrl-C, then SIGTERM), then kill it after `grace` seconds.

    tmux: `C-c` is sent to the pane; after half the grace time SIGTERM goes to the
    pane's process; after the other half the pane is killed. The dead pane's exit
    status and last lines are recorded (status `stopped`), then its window is closed.
    Foreground: SIGTERM to the CLI, SIGKILL after `grace`; the okstra that started it
    records the exit. Already ended: nothing is sent.
    """
    before = observe(run, environment, sleep=sleep)
    if not before.alive:
        return StopOutcome(run=run, before=before, after=before)
    now = environment.now().isoformat(timespec="seconds")
    update_leader(run.run_dir, {"stopRequestedAt": now})
    append_line(
        _timeline_path(run.run_dir),
        {"at": now, "event": "lead-stop-requested", "runId": run.run_id, "backend": before.backend},
    )
    steps: list[str] = []
    if before.backend == "tmux" and before.pane_ref:
        steps += _stop_tmux(run, before, environment, grace, sleep)
    elif before.process_id is not None:
        steps += _stop_process(before.process_id, grace, sleep)
        # The foreground okstra records the exit; if it is gone too, record it here.
        _wait(lambda: read_run(run.run_dir).leader.get("status") in ENDED, grace, sleep)
    after = observe(read_run(run.run_dir), environment, sleep=sleep)
    return StopOutcome(run=run, before=before, after=after, steps=tuple(steps))


def _stop_tmux(
    run: RunInfo,
    before: LeadStatus,
    environment: Environment,
    grace: float,
    sleep: Callable[[float], None],
) -> list[str]:
    pane = before.pane_ref or ""
    base = tmux_for(before.tmux_socket, environment)
    steps: list[str] = []

    def ended() -> bool:
        probe = probe_pane(pane, before.tmux_socket, environment, sleep=sleep)
        return probe.found is not True or probe.dead

    _tmux(base, ["send-keys", "-t", pane, "C-c"], environment)
    steps.append("sent Ctrl-C")
    if not _wait(ended, grace / 2, sleep):
        probe = probe_pane(pane, before.tmux_socket, environment, sleep=sleep)
        if probe.pid is not None:
            try:
                os.kill(probe.pid, signal.SIGTERM)
                steps.append(f"sent SIGTERM to {probe.pid}")
            except ProcessLookupError:
                pass
        if not _wait(ended, grace / 2, sleep):
            lines = pane_lines(pane, before.tmux_socket, environment)
            _tmux(base, ["kill-pane", "-t", pane], environment)
            steps.append("killed the pane")
            record_end(
                run.run_dir,
                environment=environment,
                exit_status=None,
                lines=lines,
                detail="did not stop within the grace time: its pane was killed",
            )
            return steps
    # Ended: record status and last lines, then close the window.
    observe(read_run(run.run_dir), environment, sleep=sleep)
    _tmux(base, ["kill-pane", "-t", pane], environment)
    steps.append("closed the window")
    return steps


def _stop_process(pid: int, grace: float, sleep: Callable[[float], None]) -> list[str]:
    steps: list[str] = []

    def gone() -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False

    try:
        os.kill(pid, signal.SIGTERM)
        steps.append(f"sent SIGTERM to {pid}")
    except ProcessLookupError:
        return steps
    if not _wait(gone, grace, sleep):
        try:
            os.kill(pid, signal.SIGKILL)
            steps.append(f"sent SIGKILL to {pid}")
        except ProcessLookupError:
            pass
    return steps


# --------------------------------------------------------------------------- attach


@dataclass(frozen=True)
class AttachPlan:
    """How to show the lead's window here: a tmux argv to run (or exec), or why not."""

    run: RunInfo
    status: LeadStatus
    argv: tuple[str, ...] | None
    switch: bool  # inside tmux on the same server: switch-client (returns at once)
    env: Mapping[str, str] | None = None
    problem: str | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "ok": self.problem is None,
            "runId": self.run.run_id,
            "run": self.run.ref,
            "lead": self.status.to_json(),
            "command": list(self.argv) if self.argv is not None else None,
            "resumeCommand": resume_command(self.run),
        }
        if self.problem is not None:
            data["error"] = self.problem
        return data


def plan_attach(run: RunInfo, environment: Environment) -> AttachPlan:
    """`switch-client` inside tmux (same server), `attach-session` outside; or a message."""
    status = observe(run, environment)
    resume = resume_command(run)
    if status.backend != "tmux" or not status.pane_ref:
        why = {
            "prepared": "its lead was never launched",
            "host-session": "its lead is the host session it was prepared in",
        }.get(status.state, f"its lead was launched in the foreground ({status.backend})")
        return AttachPlan(
            run=run,
            status=status,
            argv=None,
            switch=False,
            problem=f"there is no tmux window to attach to: {why}; to resume it: {resume}",
        )
    probe = probe_pane(status.pane_ref, status.tmux_socket, environment)
    if probe.found is not True:
        where = status.window_ref or status.pane_ref
        return AttachPlan(
            run=run,
            status=status,
            argv=None,
            switch=False,
            problem=f"the lead's tmux window {where} is gone ({status.label()}); "
            f"to resume the lead: {resume}",
        )
    base = tmux_for(status.tmux_socket, environment)
    inside = environment.get("TMUX") or ""
    same_server = bool(inside) and (
        not status.tmux_socket or inside.split(",")[0] == status.tmux_socket
    )
    if same_server:
        return AttachPlan(
            run=run,
            status=status,
            argv=(*base, "switch-client", "-t", status.pane_ref),
            switch=True,
        )
    env = {k: v for k, v in environment.env.items() if k not in ("TMUX", "TMUX_PANE")}
    return AttachPlan(
        run=run,
        status=status,
        argv=(*base, "attach-session", "-t", status.pane_ref),
        switch=False,
        env=env,
    )


def attach_error(plan: AttachPlan) -> OkstraError:
    return OkstraError(plan.problem or "cannot attach")


# --------------------------------------------------------------------------- foreground

# What a resumed lead no longer has: the earlier end and where it ran before.
_RESUMED_CLEARS: dict[str, Any] = {
    "exitStatus": None,
    "exitSignal": None,
    "exitedAt": None,
    "endDetail": None,
    "stopRequestedAt": None,
    "paneRef": None,
    "windowRef": None,
    "tmuxSocket": None,
}


def run_foreground(
    run_dir: Path,
    argv: Sequence[str],
    env: Mapping[str, str],
    cwd: Path,
    environment: Environment,
    *,
    say: Callable[[str], None],
    resumed: bool = False,
) -> int:
    """Run the lead CLI of an `exec` launch as okstra's foreground child; record its end.

    Says the run id and the exact resume command before handing the terminal over,
    and a one-line summary after the lead exits. A pending session id (a CLI that
    mints its own) is looked up once, so the resume sheet is finished when possible.

    `resumed` (`okstra resume --exec`): the lead of an earlier launch runs again here.
    Once it runs, the leader is `launched` on the `exec` backend again (its earlier
    end and tmux refs cleared) and a `lead-resumed` event is recorded, so `runs` and
    `status` see it running and its next end is recorded like the first.

    Returns:
        The lead's exit status (128 + N when killed by signal N).

    Raises:
        LaunchError: the CLI could not be started (recorded in the timeline).
    """
    run = read_run(run_dir)
    verb = "resumes" if resumed else "starts"
    say(f"okstra: run {run.ref} — the lead ({Path(argv[0]).name}) {verb} here.")
    say(f"okstra: to resume it later: {resume_command(run)}")
    started = time.monotonic()

    def on_start(pid: int) -> None:
        changes: dict[str, Any] = {
            "processId": pid,
            "processStart": process_start(pid),
            "parentProcessId": os.getpid(),
            "parentStart": process_start(os.getpid()),
        }
        if resumed:
            now = environment.now().isoformat(timespec="seconds")
            changes.update(_RESUMED_CLEARS, status="launched", launchBackend="exec", launchedAt=now)
            update_leader(run_dir, changes)
            append_line(
                _timeline_path(run_dir),
                {
                    "at": now,
                    "event": "lead-resumed",
                    "runId": run.run_id,
                    "participantRef": LEADER_REF,
                    "backend": "exec",
                    "processId": pid,
                },
            )
            return
        update_leader(run_dir, changes)

    try:
        ended = run_child(argv, env, cwd, on_start=on_start)
    except OkstraError as exc:
        append_line(
            _timeline_path(run_dir),
            {
                "at": environment.now().isoformat(timespec="seconds"),
                "event": "lead-launch-failed",
                "runId": run.run_id,
                "backend": "exec",
                "error": exc.render(),
            },
        )
        raise
    record_end(
        run_dir,
        environment=environment,
        exit_status=ended.exit_status,
        signal_number=ended.signal,
    )
    with contextlib.suppress(OkstraError):
        resume_run(run_dir, environment=environment, wait=0)
    seconds = int(time.monotonic() - started)
    how = (
        f"was killed by signal {ended.signal}"
        if ended.signal is not None
        else f"exited with status {ended.exit_status}"
    )
    say(f"okstra: the lead of {run.ref} {how} after {seconds}s; resume: {resume_command(run)}")
    return ended.code
