"""The lead after launch: is it running, how did it end, stop it.

No daemon: each look checks the tmux pane or process launch recorded (anything else is
`refused`); the first look that sees the end records it once, under the participant
lock (on a read-only project the status says it was not recorded)."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..documents.task import LeadExited, LeadStopRequested
from ..environment import Environment
from ..errors import DataFileError, OkstraError
from ..launch import RESUME_JSON
from ..processes import process, tmux
from ..processes.tmux import PaneProbe, pane_lines, probe_pane
from ..records import Delegate, config, dataclass, field, fields_of
from ..store import FileLock, append_line
from ..tasks import RUN_MANIFEST
from . import index
from .report import read_run_manifest
from .runinfo import ENDED, LEADER_REF, Leader, RunInfo, resume_command
from .runinfo import read_run as read_run
from .status import LeadStatus, base_status, with_changes
from .workers.record import timeline_path

# How many of a dead pane's last lines the timeline keeps.
LAST_LINES = 20
_LOCK_TIMEOUT = 5.0


def process_alive(identity: process.Identity) -> bool:
    """The recorded process still runs and is the one launch recorded."""
    return process.check(identity).matches


def lead_pane(lead: Leader, environment: Environment) -> tuple[tmux.TmuxServer, tmux.Pane]:
    """The lead's tmux server and pane, as launch recorded them."""
    pane = tmux.Pane(ref=lead.pane_ref or "", pid=lead.pane_process_id, start=lead.pane_start)
    return tmux.server_for(lead.tmux_socket, environment), pane


def participant_lock(run_dir: Path) -> FileLock:
    """The lock every writer of a launched run's participants takes (with resume)."""
    return FileLock(run_dir / RESUME_JSON, timeout=_LOCK_TIMEOUT)


def update_leader(run_dir: Path, changes: Mapping[str, Any]) -> None:
    """Set leader participant fields, by their names in `Participant` (under its lock)."""
    from ..prepare.runfiles import update_participant  # a writer: loaded when it writes

    with participant_lock(run_dir):
        updated = update_participant(run_dir / RUN_MANIFEST, LEADER_REF, changes)
        index.note(run_dir, updated)


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
    """Record the lead's end once (`how`: `exited`, `gone`; `stopped` when asked to stop);
    False when it was recorded already. Raises `OkstraError` when it cannot be written."""
    now = environment.now().isoformat(timespec="seconds")
    with participant_lock(run_dir):
        path, manifest = read_run_manifest(run_dir)
        leader = manifest.participant(LEADER_REF)
        if leader is None:
            raise DataFileError(f"no participant {LEADER_REF}", path=path, field="participants")
        if leader.status in ENDED:
            return False
        state = "stopped" if leader.stop_requested_at else how
        event = LeadExited(
            at=now,
            run_id=manifest.run_id,
            participant_ref=LEADER_REF,
            status=state,
            backend=leader.launch_backend,
            exit_status=exit_status,
            signal=signal_number,
            exited_at=exited_at or now,
            **fields_of(leader, "window_ref pane_ref"),
            last_lines=tuple(lines),
            detail=detail or None,
        )
        append_line(timeline_path(run_dir), event.dump())
        from ..prepare.runfiles import update_participant  # loaded when it writes

        changes = {"status": state, "exit_status": exit_status, "exit_signal": signal_number}
        changes |= {"exited_at": exited_at or now, "end_detail": detail or leader.end_detail}
        index.note(run_dir, update_participant(path, LEADER_REF, changes))
        return True


def failure_text(exc: Exception) -> str:
    if isinstance(exc, OkstraError):
        return exc.render()
    return getattr(exc, "strerror", None) or str(exc)


def _record(
    run: RunInfo, seen: LeadStatus, environment: Environment, record: bool, **end: Any
) -> LeadStatus:
    """Record the end `seen`, when asked and when the project can be written."""
    if not record:
        return seen
    try:
        done = record_end(run.run_dir, environment=environment, **end)
        again = base_status(read_run(run.run_dir))
    except (OkstraError, OSError) as exc:
        return with_changes(seen, note=f"the end was not recorded: {failure_text(exc)}")
    # Read back what was recorded (by this look or another).
    return with_changes(again, recorded=done) if again.ended else seen


def observe(
    run: RunInfo,
    environment: Environment,
    *,
    record: bool = True,
    sleep: Callable[[float], None] = time.sleep,
) -> LeadStatus:
    """Look at the lead of `run`; record its end (with `record`) the first time it is seen.
    Never raises for what a run file says (`damaged`, `refused`, or a `note`)."""
    base = base_status(run)
    if base.state != "launched":
        return base
    if base.backend == "tmux" and base.pane_ref:
        return _observe_tmux(run, base, environment, record, sleep)
    if base.backend == "exec" and base.process_id is not None:
        return _observe_exec(run, base, environment, record)
    return base


def _observe_tmux(
    run: RunInfo,
    base: LeadStatus,
    environment: Environment,
    record: bool,
    sleep: Callable[[float], None],
) -> LeadStatus:
    server, pane = lead_pane(run.lead, environment)
    probe = probe_pane(server, pane, environment, sleep=sleep)
    if probe.refused is not None:
        return with_changes(base, state="refused", detail=probe.refused)
    if probe.found is None:
        return with_changes(base, state="unknown", detail=probe.problem)
    if probe.found and not probe.dead:
        return with_changes(base, state="running")
    if probe.found:
        end = {"exit_status": probe.exit_status, "exited_at": probe.dead_at}
        ended = with_changes(base, state="exited", signal=probe.signal, **end)
        if not record:
            return ended
        lines = pane_lines(server, pane, environment, LAST_LINES)
        return _record(
            run, ended, environment, True, signal_number=probe.signal, lines=lines, **end
        )
    detail = f"its tmux pane {base.pane_ref} ({base.window_ref}) was closed: {probe.problem}"
    gone = with_changes(base, state="gone", detail=detail)
    return _record(run, gone, environment, record, exit_status=None, how="gone", detail=detail)


def _observe_exec(
    run: RunInfo, base: LeadStatus, environment: Environment, record: bool
) -> LeadStatus:
    verdict = process.check(run.lead.identity())
    if verdict.matches:
        return with_changes(base, state="running")
    if verdict.state == "refused":
        return with_changes(base, state="refused", detail=verdict.why)
    if process_alive(run.lead.parent_identity()):
        # The okstra that started it is recording its exit right now.
        return with_changes(base, state="running")
    detail = "the foreground okstra that started it ended without recording its exit"
    gone = with_changes(base, state="gone", detail=detail)
    return _record(run, gone, environment, record, exit_status=None, how="gone", detail=detail)


@dataclass(frozen=True)
class StopOutcome:
    """What `stop` did (its JSON: `okstra stop --json`)."""

    __pydantic_config__ = config(
        camel_case=True,
        aliases={"run_ref": "run", "after": "lead"},
        skip=("run", "before"),
        views=("ok", "run_id", "run_ref", "run_dir", "was_running", "stopped", "resume_command"),
        first=("ok", "run_id", "run_ref", "run_dir", "was_running", "stopped", "steps", "after"),
    )

    run: RunInfo
    before: LeadStatus
    after: LeadStatus
    steps: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return not self.after.alive

    run_id = Delegate[str]("run.run_id")
    run_ref = Delegate[str]("run.ref")
    run_dir = Delegate[Path]("run.run_dir")
    was_running = Delegate[bool]("before.alive")

    @property
    def stopped(self) -> bool:
        return self.before.alive and not self.after.alive

    @property
    def resume_command(self) -> str:
        return resume_command(self.run)


def _wait(until: Callable[[], bool], seconds: float, sleep: Callable[[float], None]) -> bool:
    deadline = time.monotonic() + seconds
    while not until():
        if time.monotonic() >= deadline:
            return False
        sleep(0.05)
    return True


def _reread(run: RunInfo) -> RunInfo:
    try:
        return read_run(run.run_dir)
    except OkstraError:
        return run


def _note_stop_request(run: RunInfo, backend: str | None, environment: Environment) -> list[str]:
    """Record that a stop was asked for; on a project okstra cannot write, say so."""
    now = environment.now().isoformat(timespec="seconds")
    try:
        update_leader(run.run_dir, {"stop_requested_at": now})
        event = LeadStopRequested(at=now, run_id=run.run_id, backend=backend)
        append_line(timeline_path(run.run_dir), event.dump())
    except (OkstraError, OSError) as exc:
        return [f"the stop request was not recorded: {failure_text(exc)}"]
    return []


def stop(
    run: RunInfo,
    environment: Environment,
    *,
    grace: float = 10.0,
    sleep: Callable[[float], None] = time.sleep,
) -> StopOutcome:
    """Ask the lead to stop (tmux: `C-c`, SIGTERM, then the pane killed; foreground: SIGTERM,
    then SIGKILL), killing it after `grace` seconds. An ended or `refused` lead is sent nothing."""
    before = observe(run, environment, sleep=sleep)
    if not before.alive:
        return StopOutcome(run=run, before=before, after=before)
    steps = _note_stop_request(run, before.backend, environment)
    if before.backend == "tmux":
        steps += _stop_tmux(run, environment, grace, sleep)
    else:
        steps += _stop_process(run.lead.identity(), grace, sleep)
        # The foreground okstra records the exit; if it is gone too, record it here.
        _wait(lambda: _reread(run).lead.status in ENDED, grace, sleep)
    after = observe(_reread(run), environment, sleep=sleep)
    return StopOutcome(run=run, before=before, after=after, steps=tuple(steps))


def _signalled(verdict: process.Verdict, sig: signal.Signals, pid: object) -> list[str]:
    if verdict.matches:
        return [f"sent {sig.name} to {pid}"]
    if verdict.state == "refused":
        return [f"sent no {sig.name}: {verdict.why}"]
    return []


def _stop_tmux(
    run: RunInfo, environment: Environment, grace: float, sleep: Callable[[float], None]
) -> list[str]:
    server, pane = lead_pane(run.lead, environment)
    steps: list[str] = []

    def ours() -> PaneProbe:
        return probe_pane(server, pane, environment, sleep=sleep)

    def ended() -> bool:
        probe = ours()
        return probe.found is not True or probe.dead

    tmux.run(server, ["send-keys", "-t", pane.ref, "C-c"], environment)
    steps.append("sent Ctrl-C")
    if not _wait(ended, grace / 2, sleep):
        verdict = process.send(tmux.pane_identity(pane), signal.SIGTERM)
        steps += _signalled(verdict, signal.SIGTERM, pane.pid)
        if not _wait(ended, grace / 2, sleep):
            if ours().found is True:
                lines = pane_lines(server, pane, environment, LAST_LINES)
                tmux.run(server, ["kill-pane", "-t", pane.ref], environment)
                steps.append("killed the pane")
                killed = with_changes(base_status(run), state="stopped")
                detail = "did not stop within the grace time: its pane was killed"
                _record(
                    run, killed, environment, True, exit_status=None, lines=lines, detail=detail
                )
            return steps
    # Ended: record status and last lines, then close the window (still the lead's).
    observe(_reread(run), environment, sleep=sleep)
    if ours().found is True:
        tmux.run(server, ["kill-pane", "-t", pane.ref], environment)
        steps.append("closed the window")
    return steps


def _stop_process(
    identity: process.Identity, grace: float, sleep: Callable[[float], None]
) -> list[str]:
    verdict = process.send(identity, signal.SIGTERM)
    steps = _signalled(verdict, signal.SIGTERM, identity.pid)
    if not verdict.matches:
        return steps
    if not _wait(lambda: not process_alive(identity), grace, sleep):
        steps += _signalled(process.send(identity, signal.SIGKILL), signal.SIGKILL, identity.pid)
    return steps
