"""Recording a worker's life in the run manifest and the task timeline, once.

The run manifest's participants and role executions are the one part of a prepared
run that changes: each change here is a locked, checked, atomic rewrite (read through
its record, changed, checked by the record, written by `store.atomic_write_bytes`).
Every writer of a run's participants — the lead's launch and resume, `okstra worker
start`, the worker supervisors, `status` recording an end — takes the same lock, the
run's resume-sheet lock, so ten workers started at once lose nothing.

A start is recorded by whoever gets there first (the starting okstra, or the worker's
supervisor should that okstra have died), an end by whoever sees it first (the
supervisor, `status`, `stop`); the timeline event is appended under the same lock, so
each is written exactly once.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from ...documents import RunManifest, trust
from ...documents.worker import WorkerExited, WorkerLaunch, WorkerStarted
from ...errors import DataFileError, UsageError
from ...launch import RESUME_JSON
from ...paths import user_dirs
from ...store import FileLock, append_line, atomic_write_bytes, read_bytes
from ...tasks import RUN_MANIFEST, TIMELINE, resolve_inside
from .. import index
from .files import WORKERS_DIR

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


def _trust_cache() -> Path:
    return user_dirs().cache / "runs"


def _read(run_dir: Path) -> tuple[Path, RunManifest, bool]:
    """(path, manifest, whether its bytes are ones okstra wrote there: see below)."""
    path = run_dir / RUN_MANIFEST
    data = read_bytes(path, what="run manifest", follow=False)
    if trust.recognised(path, data, _trust_cache()):
        with contextlib.suppress(TypeError, ValueError):
            return path, RunManifest.from_own(orjson.loads(data)), True
    return path, RunManifest.read(path), False


def read_manifest(run_dir: Path) -> tuple[Path, RunManifest]:
    """The run manifest through its record (an older layout is upgraded).

    Bytes that okstra itself wrote there (a marker in `<cache>/runs/documents/`, see
    `okstra_core.documents.trust`) are built without checking them again: a start of
    a worker then imports no validating library. Any other bytes are checked.
    """
    path, manifest, _ = _read(run_dir)
    return path, manifest


def _index(items: Sequence[dict[str, Any]], key: str, value: str) -> int | None:
    return next((i for i, item in enumerate(items) if item.get(key) == value), None)


class _Draft:
    """The manifest as JSON data, changed in place, checked once when written."""

    def __init__(self, path: Path, manifest: RunManifest, *, trusted: bool = False) -> None:
        self.path = path
        # Built from bytes okstra wrote, changed only with values okstra made: written
        # without checking again (`read_manifest`).
        self.trusted = trusted
        self.data = manifest.dump()
        self.participants: list[dict[str, Any]] = self.data["participants"]
        self.executions: list[dict[str, Any]] = self.data["roleExecutions"]

    def execution(self, ref: str) -> dict[str, Any] | None:
        at = _index(self.executions, "roleExecutionRef", ref)
        return self.executions[at] if at is not None else None

    def participant(self, ref: str) -> dict[str, Any]:
        at = _index(self.participants, "participantRef", ref)
        if at is None:
            raise DataFileError(f"no participant {ref}", path=self.path, field="participants")
        return self.participants[at]

    def add(self, added: Mapping[str, Any]) -> None:
        """Add a new attempt's (or dynamic role's) participant and role execution."""
        participant, execution = added.get("participant"), added.get("roleExecution")
        if not isinstance(participant, dict) or not isinstance(execution, dict):
            raise DataFileError("expected a participant and a role execution", path=self.path)
        if (
            _index(self.participants, "participantRef", str(participant.get("participantRef")))
            is None
        ):
            self.participants.append(dict(participant))
        if self.execution(str(execution.get("roleExecutionRef"))) is None:
            self.executions.append(dict(execution))

    def write(self, now: str | None = None) -> RunManifest:
        if self.trusted:
            checked = RunManifest.from_own(self.data)
        else:
            checked = RunManifest.parse(self.data, path=self.path)
        data = checked.to_bytes()
        atomic_write_bytes(self.path, data)
        trust.remember(self.path, data, _trust_cache())
        index.note(self.path.parent, self.data, now=now)
        return checked

    @classmethod
    def open(cls, run_dir: Path) -> _Draft:
        path, manifest, trusted = _read(run_dir)
        return cls(path, manifest, trusted=trusted)


def record_started(
    run_dir: Path,
    launch: WorkerLaunch,
    changes: Mapping[str, Any],
    *,
    now: str,
    source_ref: str | None = None,
    locked: bool = False,
) -> bool:
    """Record the worker `running` with `changes` (participant keys); append
    `worker-started` if this call is the first to record the start.

    A worker whose end is recorded already keeps it (its supervisor, slower than the
    CLI, records its process after the end: only the keys it adds are kept).

    Args:
        locked: the caller holds `run_lock(run_dir)` already.

    Returns:
        True when this call recorded the start (and wrote the event).
    """
    with contextlib.nullcontext() if locked else run_lock(run_dir):
        draft = _Draft.open(run_dir)
        if launch.added is not None:
            draft.add(launch.added)
        execution = draft.execution(launch.role_execution_ref)
        if execution is None:
            raise UsageError(f"the run has no role execution {launch.role_execution_ref}")
        participant = draft.participant(launch.participant_ref)
        first = participant.get("status") not in (RUNNING, *ENDED)
        participant.update({k: v for k, v in changes.items() if v is not None})
        execution.update(launch.tree_changes())
        if first:
            _begin_turn(execution, launch)
        if participant.get("status") not in ENDED:
            participant["status"] = RUNNING
            execution["status"] = RUNNING
        draft.write(now)
        if first:
            event = WorkerStarted(
                at=now,
                run_id=str(draft.data["runId"]),
                role_execution_ref=launch.role_execution_ref,
                participant_ref=launch.participant_ref,
                label=launch.label,
                role=launch.role,
                model_ref=launch.model_ref,
                surface=launch.surface,
                session_id=launch.session_id,
                supervisor_pid=changes.get("parentProcessId"),
                pane_ref=changes.get("paneRef"),
                window_ref=changes.get("windowRef"),
                output_log=changes.get("outputLog"),
                source_role_execution_ref=source_ref,
            )
            append_line(timeline_path(run_dir), event.dump())
        return first


def _begin_turn(execution: dict[str, Any], launch: WorkerLaunch) -> None:
    """Add the launch's turn to the role execution (once)."""
    turns = list(execution.get("turns") or [])
    if any(t.get("number") == launch.turn for t in turns):
        return
    turns.append({"number": launch.turn, "startedAt": launch.started_at, "status": RUNNING})
    execution["turns"] = turns


def _end_turn(
    execution: dict[str, Any],
    state: str,
    exit_status: int | None,
    signal: int | None,
    at: str,
    product: str | None,
) -> None:
    """Write the end of the role execution's latest turn, and where its product is."""
    turns = list(execution.get("turns") or [])
    if not turns or turns[-1].get("endedAt"):
        return
    last = dict(turns[-1])
    last.update(status=state, endedAt=at, exitStatus=exit_status, signal=signal)
    if product is not None:
        last["resultFile"] = f"{WORKERS_DIR}/{execution.get('roleExecutionRef')}/{product}"
    turns[-1] = {k: v for k, v in last.items() if v is not None}
    execution["turns"] = turns


def record_stop_requested(run_dir: Path, participant_ref: str, *, now: str) -> None:
    """Note that a stop was asked for: the end is then recorded `stopped`."""
    with run_lock(run_dir):
        draft = _Draft.open(run_dir)
        participant = draft.participant(participant_ref)
        if participant.get("status") in ENDED:
            return
        participant["stopRequestedAt"] = now
        draft.write(now)


def record_end(
    run_dir: Path,
    role_execution_ref: str,
    *,
    how: str,
    exit_status: int | None,
    signal: int | None,
    exited_at: str,
    now: str,
    lines: Sequence[str] = (),
    detail: str | None = None,
    session_id: str | None = None,
    product: str | None = None,
) -> bool:
    """Record the worker's end once: its status and `worker-exited`.

    Args:
        how: `exited` or `lost`; a worker whose stop was requested is `stopped`.
        session_id: the session id found in its output (a CLI that mints its own).
        product: the name of the file in its directory holding what it produced.

    Returns:
        True when this call recorded it; False when it was recorded already.
    """
    with run_lock(run_dir):
        draft = _Draft.open(run_dir)
        execution = draft.execution(role_execution_ref)
        if execution is None:
            return False
        participant = draft.participant(str(execution.get("participantRef")))
        if participant.get("status") in ENDED:
            return False
        state = "stopped" if participant.get("stopRequestedAt") and how != "lost" else how
        participant.update(
            status=state, exitStatus=exit_status, exitSignal=signal, exitedAt=exited_at
        )
        if detail:
            participant["endDetail"] = detail
        if session_id and not participant.get("sessionRef"):
            participant["sessionRef"] = session_id
        execution["status"] = state
        _end_turn(execution, state, exit_status, signal, exited_at, product)
        draft.write(now)
        event = WorkerExited(
            at=now,
            run_id=str(draft.data["runId"]),
            role_execution_ref=role_execution_ref,
            participant_ref=str(participant.get("participantRef")),
            label=str(execution.get("executionLabel")),
            status=state,
            exit_status=exit_status,
            signal=signal,
            exited_at=exited_at,
            last_lines=tuple(lines),
            detail=detail,
        )
        append_line(timeline_path(run_dir), event.dump())
        return True


def record_tree(
    run_dir: Path, role_execution_ref: str, changes: Mapping[str, Any], event: Any, *, now: str
) -> None:
    """Record a writer's merge or discard on its role execution (`changes`, camelCase
    keys of `RoleExecution`) and append its timeline `event` (a worker event record)."""
    with run_lock(run_dir):
        draft = _Draft.open(run_dir)
        execution = draft.execution(role_execution_ref)
        if execution is None:
            raise UsageError(f"the run has no role execution {role_execution_ref}")
        execution.update({k: v for k, v in changes.items() if v is not None})
        draft.write(now)
        append_line(timeline_path(run_dir), event.dump())


# Participant keys of one run of the CLI, cleared before a follow-up turn runs.
_RUN_KEYS = (
    "stopRequestedAt",
    "exitStatus",
    "exitSignal",
    "exitedAt",
    "endDetail",
    "processId",
    "processStart",
    "processGroup",
    "parentProcessId",
    "parentStart",
    "paneRef",
    "windowRef",
    "tmuxSocket",
)


def record_next_turn(run_dir: Path, role_execution_ref: str, kept: int, *, now: str) -> None:
    """Before a follow-up turn: the ended turn `kept` points at its files in
    `turn-<kept>/`, and the worker is `prepared` again (its end cleared) so that the
    turn's start is recorded as a start. The caller holds `run_lock(run_dir)`."""
    draft = _Draft.open(run_dir)
    execution = draft.execution(role_execution_ref)
    if execution is None:
        raise UsageError(f"the run has no role execution {role_execution_ref}")
    participant = draft.participant(str(execution.get("participantRef")))
    here = f"{WORKERS_DIR}/{role_execution_ref}/"
    turns = []
    for turn in execution.get("turns") or []:
        turn = dict(turn)
        product = turn.get("resultFile")
        if turn.get("number") == kept and isinstance(product, str) and product.startswith(here):
            turn["resultFile"] = f"{here}turn-{kept}/{product[len(here) :]}"
        turns.append(turn)
    if turns:
        execution["turns"] = turns
    for key in _RUN_KEYS:
        participant.pop(key, None)
    participant["status"] = execution["status"] = "prepared"
    draft.write(now)
