"""`task-manifest.json`, `timeline.jsonl` events, `.okstra/project.json` and the central
`runs.jsonl` rows. The two shared files keep keys okstra does not own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, get_args

from ..errors import DataFileError
from ..records import config, dataclass, field
from .base import OPEN_CONFIG, Document, Event, OpenDocument, Shape, Versioned

if TYPE_CHECKING:
    from pydantic import StrictBool, StrictInt, StrictStr

from .run import RoleExecution
from .worker import WorkerExited, WorkerStarted

NextPhaseStatus = Literal["ready", "pending", "blocked", "terminal"]


@dataclass(frozen=True, kw_only=True)
class TaskIdentity(OpenDocument):
    """Which task this is: its project, group, id, key and brief."""

    __pydantic_config__ = OPEN_CONFIG

    project_id: StrictStr
    task_group: StrictStr
    task_id: StrictStr
    task_key: StrictStr
    brief_path: StrictStr


@dataclass(frozen=True, kw_only=True)
class NextPhase(Document):
    """Where the task should go next, and whether it may go there now."""

    phase: StrictStr
    status: NextPhaseStatus
    rationale: StrictStr = ""


@dataclass(frozen=True, kw_only=True)
class Workflow(OpenDocument):
    """Where the task stands: the current phase, every phase's state, what comes next."""

    __pydantic_config__ = OPEN_CONFIG

    NESTED: ClassVar[Mapping[str, tuple[Shape, type[Document]]]] = {
        "next_recommended_phase": ("one", NextPhase)
    }

    current_phase: StrictStr
    current_phase_state: StrictStr
    phase_states: dict[StrictStr, StrictStr]
    last_completed_phase: StrictStr
    next_recommended_phase: NextPhase
    awaiting_approval: StrictBool


@dataclass(frozen=True, kw_only=True)
class RoleExecutionIndexEntry(OpenDocument):
    """One role instance of one run of the task: its role, ordinal, model and run manifest."""

    __pydantic_config__ = OPEN_CONFIG

    run_id: StrictStr
    task_type: StrictStr
    role_execution_ref: StrictStr
    participant_ref: StrictStr
    role: StrictStr
    ordinal: StrictInt
    model_ref: StrictStr | None
    execution_label: StrictStr
    model_spec_digest: StrictStr | None
    run_manifest_path: StrictStr

    @classmethod
    def of(
        cls, execution: RoleExecution, *, run_id: str, task_type: str, run_manifest_path: str
    ) -> RoleExecutionIndexEntry:
        """The entry of a run's role execution: its fields of the same name, and the run."""
        theirs = {f.name for f in fields(execution)}
        own = {f.name: getattr(execution, f.name) for f in fields(cls) if f.name in theirs}
        return cls(run_id=run_id, task_type=task_type, run_manifest_path=run_manifest_path, **own)


@dataclass(frozen=True, kw_only=True)
class LatestRun(Document):
    """The task's most recent run: its id, phase, sequence number and files."""

    run_id: StrictStr
    task_type: StrictStr
    seq: StrictInt
    created_at: StrictStr
    run_dir: StrictStr
    run_manifest_path: StrictStr
    run_inputs_path: StrictStr
    lead_prompt_path: StrictStr
    lead_session_id: StrictStr | None = None


@dataclass(frozen=True, kw_only=True)
class TaskManifest(Versioned, OpenDocument):
    """`task-manifest.json`: task identity, workflow, and every run's role executions."""

    __pydantic_config__ = OPEN_CONFIG
    WHAT: ClassVar[str] = "task manifest"
    NESTED: ClassVar[Mapping[str, tuple[Shape, type[Document]]]] = {
        "task": ("one", TaskIdentity),
        "workflow": ("one", Workflow),
        "role_execution_index": ("each", RoleExecutionIndexEntry),
        "latest_run": ("one", LatestRun),
    }

    task: TaskIdentity
    created_at: StrictStr
    updated_at: StrictStr
    workflow: Workflow
    role_execution_index: tuple[RoleExecutionIndexEntry, ...]
    latest_run: LatestRun
    latest_run_by_task_type: dict[StrictStr, StrictStr]


@dataclass(frozen=True, kw_only=True)
class RunPrepared(Event):
    """A run's files were written: its manifest, lead session and role executions."""

    event: Literal["run-prepared"] = "run-prepared"
    task_type: StrictStr
    run_manifest_path: StrictStr
    lead_session_id: StrictStr | None = None
    role_execution_refs: tuple[StrictStr, ...]


@dataclass(frozen=True, kw_only=True)
class LeadLaunched(Event):
    """The lead CLI was started, by which backend and where (window, pane)."""

    event: Literal["lead-launched"] = "lead-launched"
    backend: StrictStr
    session_id: StrictStr | None = None
    window_ref: StrictStr | None = None
    pane_ref: StrictStr | None = None
    pending_discovery: StrictBool = False


@dataclass(frozen=True, kw_only=True)
class LeadExited(Event):
    """The lead CLI ended (recorded once, by whoever saw it first)."""

    __pydantic_config__ = config(camel_case=True, by_name=True, omit_none=("detail",))

    event: Literal["lead-exited"] = "lead-exited"
    participant_ref: StrictStr
    status: StrictStr
    backend: StrictStr | None = None
    exit_status: StrictInt | None = None
    signal: StrictInt | None = None
    exited_at: StrictStr
    window_ref: StrictStr | None = None
    pane_ref: StrictStr | None = None
    last_lines: tuple[StrictStr, ...] = ()
    detail: StrictStr | None = None


@dataclass(frozen=True, kw_only=True)
class LeadResumed(Event):
    """The lead of an earlier launch runs again in the foreground (`resume --exec`)."""

    event: Literal["lead-resumed"] = "lead-resumed"
    participant_ref: StrictStr
    backend: StrictStr
    process_id: StrictInt


@dataclass(frozen=True, kw_only=True)
class LeadStopRequested(Event):
    """Someone asked okstra to stop the lead."""

    event: Literal["lead-stop-requested"] = "lead-stop-requested"
    backend: StrictStr | None = None


@dataclass(frozen=True, kw_only=True)
class LeadLaunchFailed(Event):
    """Starting the lead CLI failed, with the error."""

    event: Literal["lead-launch-failed"] = "lead-launch-failed"
    backend: StrictStr
    error: StrictStr


@dataclass(frozen=True, kw_only=True)
class SessionDiscovered(Event):
    """The session id of a CLI that picks its own was found after launch."""

    event: Literal["session-discovered"] = "session-discovered"
    participant_ref: StrictStr
    role: StrictStr
    provider: StrictStr
    session_id: StrictStr


TimelineEvent = (
    RunPrepared
    | LeadLaunched
    | LeadLaunchFailed
    | SessionDiscovered
    | LeadExited
    | LeadResumed
    | LeadStopRequested
    | WorkerStarted
    | WorkerExited
)
# Each event's `event` value → its document (the union is discriminated by `event`).
TIMELINE_EVENTS: dict[str, type[Document]] = {e.event: e for e in get_args(TimelineEvent)}


def parse_event(data: Any, *, path: Path | None = None) -> TimelineEvent:
    """One decoded `timeline.jsonl` line as its event; a `DataFileError` otherwise."""
    if not isinstance(data, dict):
        raise DataFileError("expected an object (timeline event)", path=path, field="(root)")
    kind = data.get("event")
    event = TIMELINE_EVENTS.get(kind) if isinstance(kind, str) else None
    if event is None:
        names = ", ".join(repr(name) for name in TIMELINE_EVENTS)
        raise DataFileError(f"expected one of {names} (timeline event)", path=path, field="event")
    found: TimelineEvent = event.parse(data, path=path)  # type: ignore[assignment]
    return found


@dataclass(frozen=True, kw_only=True)
class ProjectTask(OpenDocument):
    """A task of the project as `project.json` lists it: its last run and phase."""

    __pydantic_config__ = OPEN_CONFIG

    last_run_id: StrictStr
    last_task_type: StrictStr
    updated_at: StrictStr


@dataclass(frozen=True, kw_only=True)
class LastPreparedRun(Document):
    """The run prepared most recently anywhere in the project."""

    task_key: StrictStr
    run_id: StrictStr
    at: StrictStr


@dataclass(frozen=True, kw_only=True)
class ProjectDocument(OpenDocument):
    """`.okstra/project.json` (okstra's keys; `modelDefaults` is read by the catalog)."""

    __pydantic_config__ = OPEN_CONFIG

    WHAT: ClassVar[str] = "project.json"
    NESTED: ClassVar[Mapping[str, tuple[Shape, type[Document]]]] = {
        "tasks": ("values", ProjectTask),
        "last_prepared_run": ("one", LastPreparedRun),
    }

    project_id: StrictStr
    project_root: StrictStr
    tasks: dict[StrictStr, ProjectTask] = field(default_factory=dict)
    last_prepared_run: LastPreparedRun | None = None
    updated_at: StrictStr | None = None


@dataclass(frozen=True, kw_only=True)
class RunsIndexRow(Document):
    """One line of the central `runs.jsonl`: a run prepared anywhere on this machine."""

    WHAT: ClassVar[str] = "runs index row"

    at: StrictStr
    project_id: StrictStr
    project_root: StrictStr
    task_key: StrictStr
    task_type: StrictStr
    run_id: StrictStr
    run_dir: StrictStr
    run_manifest_path: StrictStr
    lead_session_id: StrictStr | None = None
    okstra_version: StrictStr
    # The run's role executions bound at prepare (the earlier okstra's lines had them).
    role_execution_refs: tuple[StrictStr, ...] = ()
