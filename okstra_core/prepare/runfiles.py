"""The files a prepared run leaves on disk, first *planned* as `PlannedFile`s.

A dry run prints every path and digest without touching the disk; a real run writes
exactly those bytes through `okstra_core.store`. Under `.okstra/tasks/<group>/<id>/`:
`runs/<task-type>-<seq>/` (run-inputs.json, run-manifest.json, lead-prompt.md and its
meta, resume.json, resume-lead.sh), task-manifest.json, task-index.md, timeline.jsonl;
plus `.okstra/project.json` (upserted) and the central `runs.jsonl`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import stat
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, cast

import orjson

from ..documents.base import EXECUTION_IDENTITY_VERSION, SCHEMA_VERSION, merged
from ..documents.carried import CarriedTask, latest_run_id, misshapen_task, own, upgraded_project
from ..documents.run import RunManifest
from ..documents.task import (
    LastPreparedRun,
    LatestRun,
    NextPhase,
    NextPhaseStatus,
    ProjectDocument,
    ProjectTask,
    RoleExecutionIndexEntry,
    TaskIdentity,
    TaskManifest,
    Workflow,
)
from ..errors import (
    DataFileError,
    IncompleteRunError,
    OkstraError,
    PrepareError,
    UsageError,
    os_error,
)
from ..records import config, dataclass
from ..store import (
    PRIVATE_DIR_MODE,
    FileLock,
    append_line,
    atomic_write_bytes,
    make_private_dirs,
    parse_json,
    read_bytes,
)
from ..tasks import RUN_DIR_NAME, TASK_MANIFEST, lower_unfinished, promote_pointer

# How long a prepare waits for another prepare of the same task to finish allocating.
SEQUENCE_LOCK_TIMEOUT = 30.0

Action = Literal["immutable", "write", "append", "upsert"]


@dataclass(frozen=True)
class PlannedFile:
    """One file write of a run, computed before anything touches the disk.

    `action`: `immutable` (create once; a different rewrite is refused), `write` (atomic
    replace), `append` (`content` is one JSONL line), `upsert` (unknown keys kept).
    """

    # Its data names the file and its digest, not its bytes.
    __pydantic_config__ = config(
        skip=("content", "mode"), views=("sha256",), first=("path", "sha256")
    )

    path: Path
    content: bytes
    action: Action = "write"
    mode: int = 0o600

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.content).hexdigest()


def run_name(task_type: str, seq: int) -> str:
    return f"{task_type}-{seq:03d}"


def used_sequences(runs_dir: Path, task_type: str) -> list[int]:
    """Sequence numbers already taken by `runs/<task_type>-<seq>` directories."""
    if not runs_dir.is_dir():
        return []
    taken: list[int] = []
    for child in runs_dir.iterdir():
        m = RUN_DIR_NAME.match(child.name)
        if m and m["type"] == task_type:
            taken.append(int(m["seq"]))
    return taken


def peek_next_sequence(task_root: Path, task_type: str, override: int | None = None) -> int:
    """The number the next prepare would get (dry runs; nothing is reserved)."""
    if override is not None:
        return override
    return max(used_sequences(task_root / "runs", task_type), default=0) + 1


# A rerun tool (or a test) that reserved a run's number in advance names it here.
SEQ_OVERRIDE_VARIABLE = "OKSTRA_RUN_SEQ_OVERRIDE"


def sequence_override(env: Mapping[str, str]) -> int | None:
    """`OKSTRA_RUN_SEQ_OVERRIDE`: the run's sequence number (a positive integer), or None."""
    raw = env.get(SEQ_OVERRIDE_VARIABLE, "").strip()
    if not raw:
        return None
    if not raw.isdigit() or int(raw) < 1:
        raise UsageError(
            f"expected a positive integer (the run's sequence number), got {raw!r}",
            field=SEQ_OVERRIDE_VARIABLE,
        )
    return int(raw)


def _claim_reserved(path: Path) -> None:
    """Take a run directory reserved in advance (UsageError unless an empty directory)."""
    st = path.lstat()
    if not stat.S_ISDIR(st.st_mode) or any(path.iterdir()):
        raise UsageError(
            f"run {path.name} already exists: {SEQ_OVERRIDE_VARIABLE} must name a free "
            "sequence number or an empty directory reserved for this run",
            path=path,
            field=SEQ_OVERRIDE_VARIABLE,
        )


def task_lock(task_root: Path) -> FileLock:
    """The per-task lock that serialises sequence allocation and task-level writes."""
    return FileLock(task_root / "runs", timeout=SEQUENCE_LOCK_TIMEOUT)


def allocate_run_dir(
    task_root: Path, task_type: str, override: int | None = None
) -> tuple[int, Path]:
    """Reserve the next run directory. Call with `task_lock(task_root)` held.

    The directory is the reservation: a number whose directory exists (even from a
    crashed prepare) is never handed out again. With `override` the run gets exactly
    that number: its directory created, or taken when reserved in advance (empty).
    """
    runs = task_root / "runs"
    make_private_dirs(runs)
    seq = max(used_sequences(runs, task_type), default=0) + 1 if override is None else override
    while True:
        path = runs / run_name(task_type, seq)
        try:
            path.mkdir(mode=PRIVATE_DIR_MODE)
        except FileExistsError:
            if override is None:
                seq += 1
                continue
            _claim_reserved(path)
        except OSError as exc:
            raise os_error(exc, doing="create the run directory", path=path) from None
        path.chmod(PRIVATE_DIR_MODE)  # mkdir's mode is masked by the umask
        return seq, path


@contextlib.contextmanager
def reservation(run_dir: Path) -> Iterator[None]:
    """Remove the reserved (still empty) run directory when planning refuses the run; a
    run whose files began to be written (`IncompleteRunError`) keeps it."""
    try:
        yield
    except IncompleteRunError:
        raise
    except BaseException:
        with contextlib.suppress(OSError):
            run_dir.rmdir()  # only while empty
        raise


def write_immutable(path: Path, content: bytes, *, mode: int = 0o600) -> bool:
    """Create `path` with `content` once: True when written, False when it held the same
    JSON already; PrepareError when it holds different content."""
    if os.path.lexists(path):
        try:
            existing = read_bytes(path, what="run input snapshot", follow=False)
            same = orjson.loads(existing) == orjson.loads(content)
        except (OkstraError, orjson.JSONDecodeError):
            same = False
        if same:
            return False
        raise PrepareError(
            "this run's input snapshot is immutable: refusing to rewrite it with "
            "different inputs (prepare again to create a new run)",
            path=path,
        )
    atomic_write_bytes(path, content, mode=mode)
    return True


def apply(files: Iterable[PlannedFile]) -> None:
    """Write every planned file, in order, each atomically (or appended durably)."""
    for f in files:
        if f.action == "immutable":
            write_immutable(f.path, f.content, mode=f.mode)
        elif f.action == "append":
            append_line(f.path, orjson.loads(f.content))
        else:
            atomic_write_bytes(f.path, f.content, mode=f.mode)


def apply_run(files: Sequence[PlannedFile], *, run_id: str, run_dir: Path) -> None:
    """`apply` for a run's files; a failure part-way is an `IncompleteRunError` naming
    what was written and whether the run is complete (only files outside it missing)."""
    written: list[Path] = []
    for f in files:
        try:
            apply([f])
        except OkstraError as exc:
            not_written = [p.path for p in files[len(written) :]]
            complete = all(not p.is_relative_to(run_dir) for p in not_written)
            raise IncompleteRunError(
                exc,
                run_id=run_id,
                run_dir=run_dir,
                written=written,
                failed=f.path,
                not_written=not_written,
                complete=complete,
            ) from None
        written.append(f.path)


@dataclass(frozen=True)
class Existing:
    """A JSON object file as prepare found it: decoded, and the exact bytes read."""

    data: dict[str, Any]
    raw: bytes


def read_object(path: Path, what: str) -> Existing | None:
    """Read a JSON object file if present; a malformed one is a `DataFileError`."""
    if not os.path.lexists(path):
        return None
    try:
        raw = read_bytes(path, what=what, follow=False)
        data = parse_json(raw, path, what=what)
    except OkstraError as exc:
        raise DataFileError(exc.message, path=path) from None
    if not isinstance(data, dict):
        raise DataFileError(f"expected a JSON object ({what})", path=path)
    return Existing(data, raw)


def read_task_manifest(task_root: Path) -> Existing | None:
    """The existing task manifest, checked enough that prepare can extend it."""
    path = task_root / TASK_MANIFEST
    found = read_object(path, "task manifest")
    if found is None:
        return None
    wrong = misshapen_task(found.data)
    if wrong is not None:
        field, shape = wrong
        raise DataFileError(f"expected {shape}", path=path, field=field)
    return found


def build_task_manifest(
    existing: Mapping[str, Any] | None,
    *,
    identity: TaskIdentity | Mapping[str, Any],
    task_type: str,
    run: LatestRun | Mapping[str, Any],
    index_entries: Sequence[RoleExecutionIndexEntry | Mapping[str, Any]],
    now: str,
) -> dict[str, Any]:
    """The next task manifest: workflow moved to `task_type` (prepared), this run's
    `index_entries` appended; keys okstra does not own kept (top and `workflow`)."""
    carried = CarriedTask.of(existing)
    pointer = lower_unfinished(
        promote_pointer(carried.next_recommended_phase), phase_completed=False
    )
    return merged(
        existing,
        TaskManifest,
        schema_version=SCHEMA_VERSION,
        execution_identity_version=EXECUTION_IDENTITY_VERSION,
        task=identity,
        created_at=carried.created_at or now,
        updated_at=now,
        workflow=merged(
            carried.workflow,
            Workflow,
            current_phase=task_type,
            current_phase_state="prepared",
            phase_states={**carried.phase_states, task_type: "prepared"},
            last_completed_phase=carried.last_completed_phase,
            next_recommended_phase=NextPhase(
                phase=pointer.phase,
                # One of `tasks.POINTER_STATUSES`, as `promote_pointer` makes them.
                status=cast(NextPhaseStatus, pointer.status),
                rationale=pointer.rationale,
            ),
            awaiting_approval=carried.awaiting_approval,
        ),
        # Appended, never rewritten: earlier runs' entries are kept verbatim.
        role_execution_index=[*carried.role_execution_index, *index_entries],
        latest_run=run,
        latest_run_by_task_type={**carried.latest_run_by_task_type, task_type: latest_run_id(run)},
    )


def build_project_json(
    existing: Mapping[str, Any] | None,
    *,
    project_id: str,
    project_root: Path,
    task_key: str,
    run_id: str,
    task_type: str,
    now: str,
) -> dict[str, Any]:
    """Upsert `.okstra/project.json`, keeping every key okstra does not own."""
    data = upgraded_project(existing)
    tasks = data.get("tasks")
    tasks = dict(tasks) if isinstance(tasks, dict) else {}
    entry = tasks.get(task_key)
    tasks[task_key] = merged(
        entry if isinstance(entry, dict) else None,
        ProjectTask,
        last_run_id=run_id,
        last_task_type=task_type,
        updated_at=now,
    )
    return merged(
        data,
        ProjectDocument,
        project_id=own(data, ProjectDocument, "project_id", project_id),
        project_root=project_root,
        tasks=tasks,
        last_prepared_run=LastPreparedRun(task_key=task_key, run_id=run_id, at=now),
        updated_at=now,
    )


def update_participant(
    run_manifest_path: Path,
    participant_ref: str,
    changes: Mapping[str, Any],
    *,
    lead_session_id: str | None = None,
) -> RunManifest:
    """Set `changes` (`Participant` field names) on one participant of the run manifest.

    The one mutation a prepared run allows: read through its record, edit, one atomic
    write. PrepareError: the manifest is missing; DataFileError: malformed, or no such
    participant.
    """
    if not run_manifest_path.exists():
        raise PrepareError("run manifest not found", path=run_manifest_path)
    manifest = RunManifest.read(run_manifest_path)
    participant = manifest.participant(participant_ref)
    if participant is None:
        raise DataFileError(
            f"no participant {participant_ref}", path=run_manifest_path, field="participants"
        )
    updated = manifest.with_participant(dataclasses.replace(participant, **changes))
    if lead_session_id:
        updated = dataclasses.replace(updated, lead_session_id=lead_session_id)
    atomic_write_bytes(run_manifest_path, updated.to_bytes())
    return updated


def record_session_ref(
    run_manifest_path: Path, participant_ref: str, session_ref: str, *, leader: bool
) -> RunManifest:
    """Record a session id found after launch (the participant's status is kept)."""
    return update_participant(
        run_manifest_path,
        participant_ref,
        {"session_ref": session_ref},
        lead_session_id=session_ref if leader else None,
    )
