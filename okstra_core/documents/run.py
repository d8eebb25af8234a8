"""`run-manifest.json` and `lead-prompt.meta.json`. A manifest of the previous layout (the
execution identity nested under `executionManifest`) is upgraded when read.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from ..catalog.models import Runner
from ..records import config, dataclass
from ..vocabulary import LeadAccess
from .base import Document, Shape, Versioned

if TYPE_CHECKING:
    from pydantic import Field, StrictInt, StrictStr


SERVED_MODEL_UNKNOWN = "unknown"
# What a worker may do to the project: its role's `writes` (the leader always writes).
WriteCapability = Literal["read-only", "workspace-write"]


# `duty` is `dutyId` in files.
_DUTY = config(camel_case=True, by_name=True, aliases={"duty": "dutyId"})


@dataclass(frozen=True, kw_only=True)
class BindingRecord(Document):
    """How a role execution runs: runner, host runtime, host model value."""

    runner: Runner
    host_runtime: StrictStr
    host_model_value: StrictStr | None = None
    execution_value: StrictStr = ""


# A participant's facts of one launch: written once launched (absent before), never
# carried to a new attempt (`Participant.new_attempt`).
LAUNCH_FIELDS = (
    "session_ref", "window_ref", "launch_backend", "launched_at", "pane_ref", "tmux_socket",
    "process_id", "process_start", "parent_process_id", "parent_start", "pane_process_id",
    "pane_start", "stop_requested_at", "exit_status", "exit_signal", "exited_at",
    "end_detail", "process_group", "output_log",
)  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class Participant(Document):
    """One agent session of the run (`participant-001` is always the leader)."""

    # The launch facts are written once launched (absent before).
    __pydantic_config__ = config(
        camel_case=True,
        by_name=True,
        omit_none=(*LAUNCH_FIELDS[2:], "worker_write_capability", "lead_access"),
    )

    participant_ref: StrictStr
    role: StrictStr
    provider: StrictStr
    model_ref: StrictStr | None
    model_id: StrictStr | None
    runner: StrictStr
    host_runtime: StrictStr
    host_model_value: StrictStr | None = None
    entry_mode: StrictStr
    session_ref: StrictStr | None = None
    window_ref: StrictStr | None = None
    status: StrictStr = "prepared"
    # Recorded at prepare (absent in a manifest written before it was).
    worker_write_capability: WriteCapability | None = None
    # The leader's: what its CLI may do without asking (absent: `ask`, or an older run).
    lead_access: LeadAccess | None = None
    # Written once launched (absent before, see `omit_none`): how the lead was started,
    # where it runs, and how it ended (`okstra_core.life.lead`).
    launch_backend: StrictStr | None = None
    launched_at: StrictStr | None = None
    pane_ref: StrictStr | None = None
    tmux_socket: StrictStr | None = None
    process_id: StrictInt | None = None
    process_start: StrictStr | None = None
    parent_process_id: StrictInt | None = None
    parent_start: StrictStr | None = None
    pane_process_id: StrictInt | None = None
    pane_start: StrictStr | None = None
    stop_requested_at: StrictStr | None = None
    exit_status: StrictInt | None = None
    exit_signal: StrictInt | None = None
    exited_at: StrictStr | None = None
    end_detail: StrictStr | None = None
    # A worker (`okstra_core.life.workers`): the process group of its CLI and, on the
    # background surface, its log (relative to the run directory).
    process_group: StrictInt | None = None
    output_log: StrictStr | None = None

    def new_attempt(self, participant_ref: str) -> Participant:
        """The participant of another attempt of this one: the same binding, no launch."""
        cleared: dict[str, Any] = dict.fromkeys(LAUNCH_FIELDS)
        return dataclasses.replace(
            self, participant_ref=participant_ref, status="prepared", **cleared
        )


# A role execution's facts of one start — its worktree and that worktree's fate, its
# turns: written once known, never carried to a new attempt (`RoleExecution.new_attempt`).
START_FIELDS = (
    "worktree_path", "branch", "base_commit", "tree_note", "merged_at", "merge_commit",
    "merged_into", "discarded_at", "turns",
)  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class Usage(Document):
    """What a worker's CLI reported one turn used (`okstra_core.life.workers.usage`).

    `input_tokens` counts every input token the model read, the cached ones included;
    `cached_input_tokens` those of them read from the CLI's prompt cache; `cost_usd`
    the cost the CLI reported, None when it reports none (never estimated).
    """

    __pydantic_config__ = config(
        camel_case=True, by_name=True, omit_none=("cached_input_tokens", "cost_usd")
    )

    input_tokens: Annotated[StrictInt, Field(ge=0)]
    output_tokens: Annotated[StrictInt, Field(ge=0)]
    cached_input_tokens: Annotated[StrictInt, Field(ge=0)] | None = None
    cost_usd: Annotated[float, Field(strict=True, ge=0, allow_inf_nan=False)] | None = None


@dataclass(frozen=True, kw_only=True)
class Turn(Document):
    """One turn of a worker's conversation: its start, or a follow-up (`worker send`).

    `result_file` is where what it produced is kept, relative to the run directory
    (set when it ends; moved when the next turn starts); `usage` what its CLI
    reported it used, where the CLI reports it.
    """

    __pydantic_config__ = config(
        camel_case=True,
        by_name=True,
        omit_none=("ended_at", "exit_status", "signal", "result_file", "usage"),
    )
    NESTED: ClassVar[Mapping[str, tuple[Shape, type[Document]]]] = {"usage": ("one", Usage)}

    number: StrictInt
    started_at: StrictStr
    status: StrictStr = "running"
    ended_at: StrictStr | None = None
    exit_status: StrictInt | None = None
    signal: StrictInt | None = None
    result_file: StrictStr | None = None
    # What its CLI reported the turn used (set when it ends; None: nothing reported).
    usage: Usage | None = None


@dataclass(frozen=True, kw_only=True)
class RoleExecution(Document):
    """One role instance of the run, bound to its participant.

    A current-session leader whose model the host did not report has `model_ref`,
    `model_id` and `model_spec_digest` null.
    """

    __pydantic_config__ = config(
        camel_case=True, by_name=True, aliases={"duty": "dutyId"}, omit_none=START_FIELDS
    )
    NESTED: ClassVar[Mapping[str, tuple[Shape, type[Document]]]] = {
        "binding": ("one", BindingRecord),
        "turns": ("each", Turn),
    }

    role_execution_ref: StrictStr
    participant_ref: StrictStr
    role: StrictStr
    duty: StrictStr
    provider: StrictStr
    model_ref: StrictStr | None
    model_id: StrictStr | None
    display_name: StrictStr
    execution: StrictStr
    ordinal: StrictInt
    execution_label: StrictStr
    model_spec_digest: StrictStr | None
    binding: BindingRecord
    provenance: StrictStr
    served_model_attestation: StrictStr = SERVED_MODEL_UNKNOWN
    status: StrictStr = "prepared"
    # A role execution started at run time (a dynamic role, another attempt) names the
    # role execution it came from; null for the team bound at prepare.
    source_role_execution_ref: StrictStr | None = None
    # A writer in a worktree of its own (`okstra_core.life.worktrees`): where, on which
    # branch, from which commit; or why it ran in the project's own tree (`tree_note`).
    worktree_path: StrictStr | None = None
    branch: StrictStr | None = None
    base_commit: StrictStr | None = None
    tree_note: StrictStr | None = None
    # Its branch merged into the project's (`okstra worker merge`), or thrown away.
    merged_at: StrictStr | None = None
    merge_commit: StrictStr | None = None
    merged_into: StrictStr | None = None
    discarded_at: StrictStr | None = None
    # A worker's turns, the first its start (`worker send` adds the next); None before.
    turns: tuple[Turn, ...] | None = None

    def new_attempt(
        self, ref: str, participant_ref: str, *, ordinal: int, label: str
    ) -> RoleExecution:
        """Another attempt of this role execution: the same role, model and binding,
        coming from this one, not started yet (no worktree, no turns)."""
        cleared: dict[str, Any] = dict.fromkeys(START_FIELDS)
        return dataclasses.replace(
            self,
            role_execution_ref=ref,
            participant_ref=participant_ref,
            ordinal=ordinal,
            execution_label=label,
            status="prepared",
            source_role_execution_ref=self.role_execution_ref,
            **cleared,
        )


@dataclass(frozen=True, kw_only=True)
class DynamicRole(Document):
    """A role the lead spawns at run time (never bound at prepare)."""

    __pydantic_config__ = config(
        camel_case=True,
        by_name=True,
        aliases={"duty": "dutyId"},
        omit_none=("worker_write_capability",),
    )

    role: StrictStr
    duty: StrictStr
    worker_write_capability: WriteCapability | None = None


@dataclass(frozen=True, kw_only=True)
class FileRef(Document):
    """A file the run depends on, with the SHA-256 of its bytes when the run was prepared."""

    path: StrictStr
    sha256: StrictStr


@dataclass(frozen=True, kw_only=True)
class ApprovedPlanRef(Document):
    """The approved plan a run implements: its file, digest and the stages it covers."""

    path: StrictStr
    sha256: StrictStr
    stages: tuple[StrictInt, ...]


_BASE_FIELDS = ("base_ref", "base_commit")


@dataclass(frozen=True, kw_only=True)
class RunManifest(Versioned):
    """`run-manifest.json`: who runs which role instance, on which model."""

    # The run's base is absent when no role of it writes (and in older manifests).
    __pydantic_config__ = config(camel_case=True, by_name=True, omit_none=_BASE_FIELDS)

    WHAT: ClassVar[str] = "run manifest"
    NESTED: ClassVar[Mapping[str, tuple[Shape, type[Document]]]] = {
        "brief": ("one", FileRef),
        "approved_plan": ("one", ApprovedPlanRef),
        "participants": ("each", Participant),
        "role_executions": ("each", RoleExecution),
        "dynamic_roles": ("each", DynamicRole),
    }
    okstra_version: StrictStr
    created_at: StrictStr
    run_id: StrictStr
    seq: StrictInt
    task_type: StrictStr
    project_id: StrictStr
    project_root: StrictStr
    task_key: StrictStr
    task_group: StrictStr
    task_id: StrictStr
    host_runtime: StrictStr
    entry_mode: StrictStr
    lead_session_id: StrictStr | None = None
    lead_session_id_kind: StrictStr | None = None
    brief: FileRef
    approved_plan: ApprovedPlanRef | None = None
    # The run's base (`okstra_core.runbase`): as given, and the commit it named at
    # prepare; its writers' worktrees branch from that commit.
    base_ref: StrictStr | None = None
    base_commit: StrictStr | None = None
    paths: dict[StrictStr, StrictStr]
    participants: Annotated[tuple[Participant, ...], Field(min_length=1)]
    role_executions: Annotated[tuple[RoleExecution, ...], Field(min_length=1)]
    dynamic_roles: tuple[DynamicRole, ...] = ()

    @classmethod
    def _upgrade(cls, data: Any) -> Any:
        # The previous layout nested the execution identity under `executionManifest`.
        if isinstance(data, dict) and isinstance(data.get("executionManifest"), dict):
            data = dict(data)
            nested = data.pop("executionManifest")
            for key in ("participants", "roleExecutions", "dynamicRoles"):
                if key in nested and key not in data:
                    data[key] = nested[key]
            if "entryMode" not in data and "entryMode" in nested:
                data["entryMode"] = nested["entryMode"]
        return data

    @property
    def leader(self) -> RoleExecution:
        return self.role_executions[0]

    def participant(self, ref: str) -> Participant | None:
        return next((p for p in self.participants if p.participant_ref == ref), None)

    def execution(self, ref: str) -> RoleExecution | None:
        return next((e for e in self.role_executions if e.role_execution_ref == ref), None)

    def with_participant(self, changed: Participant) -> RunManifest:
        """This manifest with the participant of `changed`'s ref replaced by it."""
        ref = changed.participant_ref
        kept = (changed if p.participant_ref == ref else p for p in self.participants)
        return dataclasses.replace(self, participants=tuple(kept))

    def with_execution(self, changed: RoleExecution) -> RunManifest:
        """This manifest with the role execution of `changed`'s ref replaced by it."""
        ref = changed.role_execution_ref
        kept = (changed if e.role_execution_ref == ref else e for e in self.role_executions)
        return dataclasses.replace(self, role_executions=tuple(kept))

    def with_added(self, added: AddedExecution) -> RunManifest:
        """This manifest with a new participant and role execution (each kept once)."""
        participants, executions = self.participants, self.role_executions
        if self.participant(added.participant.participant_ref) is None:
            participants = (*participants, added.participant)
        if self.execution(added.role_execution.role_execution_ref) is None:
            executions = (*executions, added.role_execution)
        return dataclasses.replace(self, participants=participants, role_executions=executions)


@dataclass(frozen=True, kw_only=True)
class AddedExecution(Document):
    """A role execution started at run time (another attempt, a dynamic role) with its
    participant: what a worker start adds to the run manifest."""

    NESTED: ClassVar[Mapping[str, tuple[Shape, type[Document]]]] = {
        "participant": ("one", Participant),
        "role_execution": ("one", RoleExecution),
    }

    participant: Participant
    role_execution: RoleExecution


@dataclass(frozen=True, kw_only=True)
class LeadPromptMeta(Document):
    """`lead-prompt.meta.json`: the invocation identity of the rendered lead prompt."""

    __pydantic_config__ = _DUTY

    WHAT: ClassVar[str] = "lead prompt meta"
    invocation_id: StrictStr
    participant_ref: StrictStr
    role_execution_ref: StrictStr
    duty: StrictStr
    attempt: StrictInt = 1
    prompt_sha256: StrictStr
    prompt_path: StrictStr
