"""Task-level and project-level documents: `task-manifest.json`, `timeline.jsonl`
events, `.okstra/project.json` and the central `runs.jsonl` rows.

`task-manifest.json` and `project.json` are shared with people and other tools: keys
okstra does not own are kept (they are open documents); everything okstra writes in
them is typed here.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import ConfigDict, Field, StrictBool, StrictInt, StrictStr, TypeAdapter

from .base import Document, OpenDocument
from .run import EXECUTION_IDENTITY_VERSION, SCHEMA_VERSION


# Default factories are Python functions, not the `dict` builtin: pydantic reads
# a factory's signature when it builds a model, and a builtin's signature is parsed
# from text (compiling the tokenizer's regular expressions, ~2 ms of a process).
def _new_dict() -> dict[Any, Any]:
    return {}


__all__ = [
    "TIMELINE_EVENT",
    "LatestRun",
    "LeadLaunchFailed",
    "LeadLaunched",
    "NextPhase",
    "ProjectDocument",
    "RoleExecutionIndexEntry",
    "RunPrepared",
    "RunsIndexRow",
    "SessionDiscovered",
    "TaskIdentity",
    "TaskManifest",
    "TimelineEvent",
    "Workflow",
]


class TaskIdentity(OpenDocument):
    project_id: StrictStr
    task_group: StrictStr
    task_id: StrictStr
    task_key: StrictStr
    brief_path: StrictStr


class NextPhase(Document):
    """Where the task should go next, and whether it may go there now."""

    phase: StrictStr
    status: Literal["ready", "pending", "blocked", "terminal"]
    rationale: StrictStr = ""


class Workflow(OpenDocument):
    current_phase: StrictStr
    current_phase_state: StrictStr
    phase_states: dict[StrictStr, StrictStr]
    last_completed_phase: StrictStr
    next_recommended_phase: NextPhase
    awaiting_approval: StrictBool


class RoleExecutionIndexEntry(OpenDocument):
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


class LatestRun(Document):
    run_id: StrictStr
    task_type: StrictStr
    seq: StrictInt
    created_at: StrictStr
    run_dir: StrictStr
    run_manifest_path: StrictStr
    run_inputs_path: StrictStr
    lead_prompt_path: StrictStr
    lead_session_id: StrictStr | None = None


class TaskManifest(OpenDocument):
    """`task-manifest.json`: task identity, workflow, and every run's role executions."""

    WHAT: ClassVar[str] = "task manifest"
    schema_version: Literal["2.0"] = SCHEMA_VERSION
    execution_identity_version: Literal[2] = EXECUTION_IDENTITY_VERSION
    task: TaskIdentity
    created_at: StrictStr
    updated_at: StrictStr
    workflow: Workflow
    role_execution_index: tuple[RoleExecutionIndexEntry, ...]
    latest_run: LatestRun
    latest_run_by_task_type: dict[StrictStr, StrictStr]


class _Event(Document):
    at: StrictStr
    run_id: StrictStr


class RunPrepared(_Event):
    event: Literal["run-prepared"] = "run-prepared"
    task_type: StrictStr
    run_manifest_path: StrictStr
    lead_session_id: StrictStr | None = None
    role_execution_refs: tuple[StrictStr, ...]


class LeadLaunched(_Event):
    event: Literal["lead-launched"] = "lead-launched"
    backend: StrictStr
    session_id: StrictStr | None = None
    window_ref: StrictStr | None = None
    pane_ref: StrictStr | None = None
    pending_discovery: StrictBool = False


class LeadExited(_Event):
    """The lead CLI ended (recorded once, by whoever saw it first)."""

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
    detail: StrictStr | None = Field(default=None, exclude_if=lambda value: value is None)


class LeadStopRequested(_Event):
    event: Literal["lead-stop-requested"] = "lead-stop-requested"
    backend: StrictStr | None = None


class LeadLaunchFailed(_Event):
    event: Literal["lead-launch-failed"] = "lead-launch-failed"
    backend: StrictStr
    error: StrictStr


class SessionDiscovered(_Event):
    event: Literal["session-discovered"] = "session-discovered"
    participant_ref: StrictStr
    role: StrictStr
    provider: StrictStr
    session_id: StrictStr


TimelineEvent = Annotated[
    RunPrepared
    | LeadLaunched
    | LeadLaunchFailed
    | SessionDiscovered
    | LeadExited
    | LeadStopRequested,
    Field(discriminator="event"),
]
# Built on first use (importing the documents stays cheap).
TIMELINE_EVENT: TypeAdapter[Any] = TypeAdapter(TimelineEvent, config=ConfigDict(defer_build=True))


class ProjectTask(OpenDocument):
    last_run_id: StrictStr
    last_task_type: StrictStr
    updated_at: StrictStr


class LastPreparedRun(Document):
    task_key: StrictStr
    run_id: StrictStr
    at: StrictStr


class ProjectDocument(OpenDocument):
    """`.okstra/project.json` (okstra's keys; `modelDefaults` is read by the catalog)."""

    WHAT: ClassVar[str] = "project.json"
    project_id: StrictStr
    project_root: StrictStr
    tasks: dict[StrictStr, ProjectTask] = Field(default_factory=_new_dict)
    last_prepared_run: LastPreparedRun | None = None
    updated_at: StrictStr | None = None


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
