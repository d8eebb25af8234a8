"""Recording a worker's life in the run manifest and the task timeline, once.

Each change is a locked, atomic rewrite of the manifest through its records. Every
writer of a run's participants (lead launch and resume, `worker start`, supervisors,
`status`) takes the run's resume-sheet lock, so ten workers started at once lose
nothing; a start or end is recorded by whoever gets there first, and its timeline event
is appended under the same lock, so each is written exactly once.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from ...documents import trust
from ...documents.run import Participant, RoleExecution, RunManifest, Turn
from ...documents.worker import WorkerExit, WorkerExited, WorkerLaunch, WorkerStarted
from ...errors import DataFileError, UsageError
from ...launch import RESUME_JSON
from ...paths import user_dirs
from ...records import fields_of
from ...store import FileLock, append_line, atomic_write_bytes, read_bytes
from ...tasks import RUN_MANIFEST, TIMELINE, resolve_inside
from .. import index
from .files import WORKERS_DIR, tail_lines

# A worker's status once ended: by itself (`exited`), on request (`stopped`), or
# without anyone seeing how (`lost`: its processes are gone and it left no exit record).
ENDED = ("exited", "stopped", "lost")
RUNNING = "running"
# Ten starts and their supervisors queue on one lock; each holds it for a few ms.
LOCK_TIMEOUT = 60.0


def run_lock(run_dir: Path) -> FileLock:
    """The lock of a run's participants (the same file the lead's writers lock)."""
    return FileLock(run_dir / RESUME_JSON, timeout=LOCK_TIMEOUT)


def timeline_path(run_dir: Path) -> Path:
    troot = run_dir.parent.parent
    return resolve_inside(troot, troot / TIMELINE, what="the task timeline")


def now_text() -> str:
    """Now, as the run's files record times."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def _trust_cache() -> Path:
    return user_dirs().cache / "runs"


def read_manifest(run_dir: Path) -> tuple[Path, RunManifest]:
    """The run manifest through its record (an older layout upgraded); bytes okstra wrote
    itself (`documents.trust`) are not validated again, so a start skips pydantic."""
    path, manifest, _ = read_manifest_bytes(run_dir)
    return path, manifest


def read_manifest_bytes(run_dir: Path) -> tuple[Path, RunManifest, bytes]:
    """(path, manifest, the file's bytes) — see `read_manifest`."""
    path = run_dir / RUN_MANIFEST
    data = read_bytes(path, what="run manifest", follow=False)
    if trust.recognised(path, data, _trust_cache()):
        with contextlib.suppress(TypeError, ValueError):
            return path, RunManifest.from_own(orjson.loads(data)), data
    return path, RunManifest.read(path), data


@dataclasses.dataclass
class _Draft:
    """The manifest as read (`_Draft(*read_manifest(run_dir))`), edited through its
    records, written once."""

    path: Path
    manifest: RunManifest

    def participant(self, ref: str) -> Participant:
        found = self.manifest.participant(ref)
        if found is None:
            raise DataFileError(f"no participant {ref}", path=self.path, field="participants")
        return found

    def execution(self, ref: str) -> RoleExecution:
        found = self.manifest.execution(ref)
        if found is None:
            raise UsageError(f"the run has no role execution {ref}")
        return found

    def change(self, participant: Participant, execution: RoleExecution | None = None) -> None:
        self.manifest = self.manifest.with_participant(participant)
        if execution is not None:
            self.manifest = self.manifest.with_execution(execution)

    def write(self, now: str | None = None) -> RunManifest:
        data = self.manifest.to_bytes()
        atomic_write_bytes(self.path, data)
        trust.remember(self.path, data, _trust_cache())
        index.note(self.path.parent, self.manifest, now=now)
        return self.manifest


def record_started(
    run_dir: Path,
    launch: WorkerLaunch,
    changes: Mapping[str, Any],
    *,
    now: str,
    source_ref: str | None = None,
    locked: bool = False,
) -> bool:
    """Record the worker `running` with `changes` (`Participant` fields); the first call
    to record the start appends `worker-started` and returns True. An end recorded already
    is kept (a supervisor slower than its CLI adds only fields). `locked`: the caller holds
    `run_lock(run_dir)` already."""
    with contextlib.nullcontext() if locked else run_lock(run_dir):
        draft = _Draft(*read_manifest(run_dir))
        if launch.added is not None:
            draft.manifest = draft.manifest.with_added(launch.added)
        execution = draft.execution(launch.role_execution_ref)
        participant = draft.participant(launch.participant_ref)
        first = participant.status not in (RUNNING, *ENDED)
        participant = dataclasses.replace(
            participant, **{k: v for k, v in changes.items() if v is not None}
        )
        execution = dataclasses.replace(execution, **launch.tree_changes())
        if first:
            execution = _begin_turn(execution, launch)
        if participant.status not in ENDED:
            participant = dataclasses.replace(participant, status=RUNNING)
            execution = dataclasses.replace(execution, status=RUNNING)
        draft.change(participant, execution)
        draft.write(now)
        if first:
            event = WorkerStarted(
                at=now,
                run_id=draft.manifest.run_id,
                **fields_of(launch, "role_execution_ref participant_ref label role"),
                **fields_of(launch, "model_ref surface session_id"),
                **fields_of(participant, "pane_ref window_ref output_log"),
                supervisor_pid=participant.parent_process_id,
                source_role_execution_ref=source_ref,
            )
            append_line(timeline_path(run_dir), event.dump())
        return first


def _begin_turn(execution: RoleExecution, launch: WorkerLaunch) -> RoleExecution:
    """The role execution with the launch's turn added (once)."""
    turns = execution.turns or ()
    if any(t.number == launch.turn for t in turns):
        return execution
    turn = Turn(number=launch.turn, started_at=launch.started_at, status=RUNNING)
    return dataclasses.replace(execution, turns=(*turns, turn))


def _end_turn(
    execution: RoleExecution, state: str, ended: WorkerExit, product: str | None
) -> RoleExecution:
    """The role execution with its latest turn ended (its product and usage recorded)."""
    turns = execution.turns or ()
    if not turns or turns[-1].ended_at:
        return execution
    last = turns[-1]
    if product is not None:
        last = dataclasses.replace(
            last, result_file=f"{WORKERS_DIR}/{execution.role_execution_ref}/{product}"
        )
    last = dataclasses.replace(
        last,
        status=state,
        ended_at=ended.exited_at,
        **fields_of(ended, "exit_status signal usage"),
    )
    return dataclasses.replace(execution, turns=(*turns[:-1], last))


def record_stop_requested(run_dir: Path, participant_ref: str, *, now: str) -> None:
    """Note that a stop was asked for: the end is then recorded `stopped`."""
    with run_lock(run_dir):
        draft = _Draft(*read_manifest(run_dir))
        participant = draft.participant(participant_ref)
        if participant.status in ENDED:
            return
        draft.change(dataclasses.replace(participant, stop_requested_at=now))
        draft.write(now)


def record_end(
    run_dir: Path,
    role_execution_ref: str,
    ended: WorkerExit,
    *,
    how: str,
    now: str,
    product: str | None = None,
) -> bool:
    """Record the worker's end (`how`: `exited` or `lost`; `stopped` once a stop was asked
    for) and `worker-exited` once; False when recorded already. `product`: the file in its
    directory holding what it produced."""
    lines = tail_lines(run_dir, role_execution_ref, 20)
    with run_lock(run_dir):
        draft = _Draft(*read_manifest(run_dir))
        execution = draft.manifest.execution(role_execution_ref)
        if execution is None:
            return False
        participant = draft.participant(execution.participant_ref)
        if participant.status in ENDED:
            return False
        state = "stopped" if participant.stop_requested_at and how != "lost" else how
        participant = dataclasses.replace(
            participant,
            status=state,
            exit_status=ended.exit_status,
            exit_signal=ended.signal,
            exited_at=ended.exited_at,
            end_detail=ended.detail or participant.end_detail,
        )
        if ended.session_id and not participant.session_ref:
            participant = dataclasses.replace(participant, session_ref=ended.session_id)
        execution = dataclasses.replace(execution, status=state)
        draft.change(participant, _end_turn(execution, state, ended, product))
        draft.write(now)
        event = WorkerExited(
            at=now,
            run_id=draft.manifest.run_id,
            role_execution_ref=role_execution_ref,
            participant_ref=participant.participant_ref,
            label=execution.execution_label,
            status=state,
            **fields_of(ended, "exit_status signal exited_at detail"),
            last_lines=tuple(lines),
        )
        append_line(timeline_path(run_dir), event.dump())
        return True


def record_tree(
    run_dir: Path, role_execution_ref: str, changes: Mapping[str, Any], event: Any, *, now: str
) -> None:
    """Record a writer's merge or discard (`RoleExecution` fields) and its timeline event."""
    with run_lock(run_dir):
        draft = _Draft(*read_manifest(run_dir))
        execution = draft.execution(role_execution_ref)
        changed = {k: v for k, v in changes.items() if v is not None}
        draft.manifest = draft.manifest.with_execution(dataclasses.replace(execution, **changed))
        draft.write(now)
        append_line(timeline_path(run_dir), event.dump())


# A participant's facts of one run of the CLI, cleared before a follow-up turn runs.
_RUN_FIELDS = (
    *("stop_requested_at", "exit_status", "exit_signal", "exited_at", "end_detail"),
    *("process_id", "process_start", "process_group", "parent_process_id", "parent_start"),
    *("pane_ref", "window_ref", "tmux_socket"),
)


def record_next_turn(run_dir: Path, role_execution_ref: str, kept: int, *, now: str) -> RunManifest:
    """Before a follow-up turn (under `run_lock`): turn `kept` points at `turn-<kept>/`
    and the worker is `prepared` again, so the next start is recorded as one."""
    draft = _Draft(*read_manifest(run_dir))
    execution = draft.execution(role_execution_ref)
    participant = draft.participant(execution.participant_ref)
    here = f"{WORKERS_DIR}/{role_execution_ref}/"

    def kept_apart(turn: Turn) -> Turn:
        product = turn.result_file
        if turn.number == kept and product is not None and product.startswith(here):
            return dataclasses.replace(
                turn, result_file=f"{here}turn-{kept}/{product[len(here) :]}"
            )
        return turn

    turns = tuple(kept_apart(t) for t in execution.turns or ())
    cleared: dict[str, Any] = dict.fromkeys(_RUN_FIELDS)
    draft.change(
        dataclasses.replace(participant, status="prepared", **cleared),
        dataclasses.replace(execution, status="prepared", turns=turns or execution.turns),
    )
    return draft.write(now)
