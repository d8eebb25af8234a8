"""What each member of a run's team is doing now, and recording ends nobody saw.

okstra runs no daemon: if a worker's supervisor could not record its end, the next look
(`worker status`, `wait`, `okstra status`, the app) records it from `exit.json`, or as
`lost` when supervisor and CLI are both gone and no `exit.json` was left.

A running worker's activity (`running`, `waiting for input`, `idle`, `stalled`): the last
lines of its `output.log` matched against the provider's `[activity]` patterns, and how
long the log has been quiet (past `idle_after` while waiting `idle`, otherwise past
`stall_after`, 120 s by default, `stalled`). A listing's one line of the team costs one
`lstat` for a run without workers and never records ends.
"""

from __future__ import annotations

import dataclasses
import os
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from ...catalog import load_catalog
from ...catalog.activity import STALLED, ActivitySpec, classify, settled
from ...display import status_label, words_of
from ...documents.worker import WorkerExit
from ...environment import Environment
from ...errors import FileSystemError, OkstraError
from ...processes.process import Identity
from ...records import config, dataclass, fields_of
from . import files, record
from .team import Member, members
from .usage import UsageTotal, total_of

LOST_DETAIL = (
    "its supervisor and CLI are gone and it left no exit record "
    "(okstra or the machine was stopped while it ran)"
)


@dataclass(frozen=True, kw_only=True)
class WorkerState:
    """One member of the team as okstra sees it now (a row of `worker status`).

    `state` is `prepared`, `running`, `exited`, `stopped` or `lost` (the lead: its own
    states, see `okstra status`); `status` is what people read (`exited 3`).
    """

    __pydantic_config__ = config(camel_case=True)

    role_execution_ref: str
    participant_ref: str
    label: str
    short: str
    role: str
    provider: str
    model_ref: str | None
    leader: bool
    access: str | None = None
    surface: str | None
    state: str
    status: str
    exit_status: int | None = None
    signal: int | None = None
    started_at: str | None = None
    ended_at: str | None = None
    elapsed_seconds: int | None = None
    last_line: str | None = None
    session_id: str | None = None
    pane_ref: str | None = None
    window_ref: str | None = None
    process_id: int | None = None
    output_log: str | None = None
    source_role_execution_ref: str | None = None
    worktree_path: str | None = None
    branch: str | None = None
    activity: str | None = None
    activity_detail: str | None = None
    detail: str | None = None
    # What its CLI reported its turns used, added up (None: nothing reported).
    usage: UsageTotal | None = None
    recorded_now: bool = False

    @property
    def ended(self) -> bool:
        return self.state in record.ENDED

    @property
    def running(self) -> bool:
        return self.state == record.RUNNING


@dataclass(frozen=True)
class WorkerActivity:
    """One look at a running worker: its activity and, when stalled, what okstra knows."""

    state: str
    quiet_seconds: int
    detail: str | None = None


def provider_activity(provider_id: str, environment: Environment) -> ActivitySpec | None:
    """The provider's `[activity]` (None when it has none, or its file does not load)."""
    try:
        spec: ActivitySpec | None = load_catalog(environment).provider(provider_id).activity
    except OkstraError:
        return None
    return spec


def iso_time(value: str | None) -> datetime | None:
    """An ISO time as an aware datetime (UTC when naive); None when missing or malformed."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def worker_activity(
    run_dir: Path, ref: str, spec: ActivitySpec | None, *, started_at: str | None, now: datetime
) -> WorkerActivity:
    """The activity of the running worker `ref` of the run (see the module)."""
    count = spec.lines if spec is not None else 15
    lines = files.tail_lines(run_dir, ref, count)
    since = files.last_written(run_dir, ref) or iso_time(started_at) or now
    quiet = max(0.0, (now - since).total_seconds())
    state = settled(classify(lines, spec), quiet, spec)
    detail = None
    if state == STALLED:
        detail = f"no output for {int(quiet)} s" + (f"; last: {lines[-1]}" if lines else "")
    return WorkerActivity(state=state, quiet_seconds=int(quiet), detail=detail)


def _elapsed(started: str | None, ended: str | None, now: datetime) -> int | None:
    begin = iso_time(started)
    if begin is None:
        return None
    end = iso_time(ended) or now
    return max(0, int((end - begin).total_seconds()))


def state_of(
    run_dir: Path, member: Member, now: datetime, *, recorded: bool = False
) -> WorkerState:
    """The member's state as recorded in the manifest (no process looked at)."""
    state = member.status
    exit_status, sig = member.participant.exit_status, member.participant.exit_signal
    started, ended = member.participant.launched_at, member.participant.exited_at
    last = None
    if not member.leader and state != "prepared":
        lines = words_of(files.tail_lines(run_dir, member.ref, 40), 1)
        last = lines[-1] if lines else None
    return WorkerState(
        role_execution_ref=member.ref,
        **fields_of(member, "participant_ref label short role provider model_ref"),
        leader=member.leader,
        access=member.participant.worker_write_capability,
        surface=member.participant.launch_backend,
        state=state,
        status=status_label(state, exit_status, sig),
        exit_status=exit_status,
        signal=sig,
        started_at=started,
        ended_at=ended,
        elapsed_seconds=_elapsed(started, ended, now) if started else None,
        last_line=last,
        session_id=member.participant.session_ref,
        **fields_of(member.participant, "pane_ref window_ref process_id output_log"),
        **fields_of(member.execution, "source_role_execution_ref worktree_path branch"),
        detail=member.participant.end_detail,
        usage=total_of(t.usage for t in member.execution.turns or ()),
        recorded_now=recorded,
    )


def _alive(member: Member) -> bool:
    supervisor = Identity.of(member.participant.parent_process_id, member.participant.parent_start)
    cli = Identity.of(member.participant.process_id, member.participant.process_start)
    return any(p is not None and p.alive() for p in (supervisor, cli))


def _the_end(run_dir: Path, member: Member, now: str) -> tuple[str, WorkerExit] | None:
    """How the worker ended, from its `exit.json`, else `lost` when nothing of it runs;
    None while it runs."""
    ended = files.read_exit(run_dir, member.ref)
    if ended is None and _alive(member):
        return None
    if ended is None:
        ended = files.read_exit(run_dir, member.ref)  # written as its supervisor ended, just now
    if ended is not None:
        return "exited", ended
    started = member.participant.launched_at or now
    lost = WorkerExit(
        exit_status=None,
        signal=None,
        started_at=started,
        exited_at=now,
        process_id=None,
        detail=LOST_DETAIL,
    )
    return "lost", lost


def _end_seen(run_dir: Path, member: Member, environment: Environment) -> bool | None:
    """Record an end nobody recorded; True: this look did, False: another, None: running."""
    now = environment.now().isoformat(timespec="seconds")
    end = _the_end(run_dir, member, now)
    if end is None:
        return None
    how, ended = end
    return record.record_end(run_dir, member.ref, ended, how=how, now=now)


def seen_unrecorded(run_dir: Path, member: Member, environment: Environment) -> Member:
    """The member as its end would be recorded, without recording it (read-only project)."""
    if member.leader or member.status != record.RUNNING:
        return member
    end = _the_end(run_dir, member, environment.now().isoformat(timespec="seconds"))
    if end is None:
        return member
    how, ended = end
    participant = dataclasses.replace(
        member.participant,
        status="stopped" if member.participant.stop_requested_at and how != "lost" else how,
        exit_status=ended.exit_status,
        exit_signal=ended.signal,
        exited_at=ended.exited_at,
        end_detail=ended.detail,
    )
    execution, turns = member.execution, member.execution.turns or ()
    if ended.usage is not None and turns and turns[-1].ended_at is None:
        last = dataclasses.replace(turns[-1], usage=ended.usage)  # the turn's usage
        execution = dataclasses.replace(execution, turns=(*turns[:-1], last))
    return dataclasses.replace(member, participant=participant, execution=execution)


def end_seen_or_looked(run_dir: Path, member: Member, environment: Environment) -> Member:
    """The member after its end is recorded when seen (else `seen_unrecorded`)."""
    try:
        if _end_seen(run_dir, member, environment) is None:
            return member
    except FileSystemError:
        return seen_unrecorded(run_dir, member, environment)
    return next(m for m in read_team(run_dir) if m.ref == member.ref)


def read_team(run_dir: Path) -> list[Member]:
    """The run's team from its manifest."""
    _, manifest = record.read_manifest(run_dir)
    return members(manifest)


def observe_team(
    run_dir: Path, environment: Environment, *, record_ends: bool = True
) -> list[WorkerState]:
    """Every member of the run's team, looked at now; a running worker's end is recorded
    when seen (unless `record_ends` is False or nothing can be written)."""
    team = read_team(run_dir)
    now = environment.now()
    changed = False
    seen: dict[str, bool] = {}
    for member in team:
        if member.leader or member.status != record.RUNNING or not record_ends:
            continue
        try:
            done = _end_seen(run_dir, member, environment)
        except FileSystemError:  # nothing can be written here: looked at only
            record_ends = False
            break
        if done is not None:
            changed = True
            seen[member.ref] = done
    if changed:
        team = read_team(run_dir)
    if not record_ends:
        team = [seen_unrecorded(run_dir, m, environment) for m in team]
    states = [state_of(run_dir, m, now, recorded=seen.get(m.ref, False)) for m in team]
    return with_activity(run_dir, states, environment)


def with_activity(
    run_dir: Path, states: list[WorkerState], environment: Environment
) -> list[WorkerState]:
    """The states with each running worker's activity (`worker_activity`)."""
    specs: dict[str, ActivitySpec | None] = {}
    now = environment.now()
    shown: list[WorkerState] = []
    for state in states:
        if state.leader or not state.running:
            shown.append(state)
            continue
        provider = state.provider
        if provider not in specs:
            specs[provider] = provider_activity(provider, environment)
        seen = worker_activity(
            run_dir, state.role_execution_ref, specs[provider], started_at=state.started_at, now=now
        )
        shown.append(dataclasses.replace(state, activity=seen.state, activity_detail=seen.detail))
    return shown


def shown_state(state: WorkerState) -> str:
    """A worker's state as people read it: a running one's activity, else its status."""
    if state.running and state.activity:
        return state.activity
    return state.status


def team_states(run_dir: Path, environment: Environment) -> dict[str, str]:
    """`{"analyser#1": "stalled", ...}` for the run's started workers, in team order."""
    if not os.path.isdir(run_dir / files.WORKERS_DIR):
        return {}
    try:
        team = observe_team(run_dir, environment, record_ends=False)
    except OkstraError:
        return {}
    return {s.short: shown_state(s) for s in team if not s.leader and s.state != "prepared"}


def summary(states: dict[str, str]) -> str:
    """`2 running · 1 stalled · 3 ended` (`-` without workers)."""
    if not states:
        return "-"
    counted = Counter(
        "ended" if state.startswith(("exited", "stopped", "lost")) else state
        for state in states.values()
    )
    order = ("waiting for input", "idle", "stalled", "running", "ended")
    parts = [f"{counted[name]} {name}" for name in order if counted[name]]
    parts += [f"{n} {name}" for name, n in counted.items() if name not in order]
    return " · ".join(parts)
