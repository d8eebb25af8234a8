"""The execution manifest: who runs which role instance, on which model.

A participant is one agent session (`participant-001` the leader); a role execution is
one role instance bound to one (`role-exec-<role>-<ordinal:03d>`). The final report's
`executionRoles` must equal this set exactly (`okstra_core.life.report`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import orjson

from ..catalog.models import LEADER
from ..documents.run import BindingRecord, DynamicRole, Participant, RoleExecution, WriteCapability
from ..records import config, dataclass, fields_of, to_data
from ..request import UNREPORTED_MODEL

if TYPE_CHECKING:
    from ..binding import Binding
    from ..catalog.models import RoleRequirement
    from ..resolver import ResolvedAssignment


@dataclass(frozen=True)
class ExecutionManifest:
    """Participants, role executions and the roles the lead spawns at run time."""

    entry_mode: str
    participants: tuple[Participant, ...]
    role_executions: tuple[RoleExecution, ...]
    dynamic_roles: tuple[DynamicRole, ...]

    @property
    def leader(self) -> RoleExecution:
        return self.role_executions[0]


def role_execution_ref(role: str, ordinal: int) -> str:
    return f"role-exec-{role}-{ordinal:03d}"


def execution_label(role: str, ordinal: int, model_ref: str) -> str:
    """`analyser#2 · codex/gpt-5.6-sol`."""
    return f"{role}#{ordinal} · {model_ref}"


def write_capability(role: str, writing_roles: Collection[str]) -> WriteCapability:
    """`workspace-write` for the leader and a role that writes, else `read-only`."""
    return "workspace-write" if role == LEADER or role in writing_roles else "read-only"


def binding_record(binding: Binding, execution: str) -> BindingRecord:
    fields = fields_of(binding, "runner host_runtime host_model_value")
    return BindingRecord(**fields, execution_value=execution)


@dataclass(frozen=True, kw_only=True)
class ModelSpecOf:
    """What a role execution's model spec digest covers: the model, and its binding."""

    __pydantic_config__ = config(camel_case=True)

    model_ref: str
    provider: str
    model_id: str
    display: str
    execution: str


@dataclass(frozen=True, kw_only=True)
class _DigestedSpec:
    __pydantic_config__ = config()

    model: ModelSpecOf
    binding: BindingRecord


def model_spec_digest(assignment: ResolvedAssignment) -> str:
    """sha256 of the canonical JSON of the model spec and its binding."""
    spec = _DigestedSpec(
        model=ModelSpecOf(
            model_ref=assignment.model_ref,
            provider=assignment.provider_id,
            model_id=assignment.model_id,
            display=assignment.display_name,
            execution=assignment.execution,
        ),
        binding=binding_record(assignment.binding, assignment.execution),
    )
    canonical = orjson.dumps(to_data(spec), option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(canonical).hexdigest()


def bound_execution(
    a: ResolvedAssignment,
    participant_ref: str,
    *,
    write_capability: WriteCapability,
    unknown: bool = False,
) -> tuple[Participant, RoleExecution]:
    """The participant and role execution of an assignment, not launched yet (`unknown`:
    a model the host did not report, recorded as null, never invented)."""
    model: dict[str, Any] = {"provider": a.provider_id, "model_ref": None, "model_id": None}
    if not unknown:
        model |= fields_of(a, "model_ref model_id")
    participant = Participant(
        participant_ref=participant_ref,
        **fields_of(a, "role host_runtime entry_mode"),
        **model,
        runner=a.binding.runner,
        host_model_value=a.binding.host_model_value,
        worker_write_capability=write_capability,
    )
    execution = RoleExecution(
        role_execution_ref=role_execution_ref(a.role, a.ordinal),
        participant_ref=participant_ref,
        **fields_of(a, "role duty execution ordinal provenance"),
        **model,
        display_name=UNREPORTED_MODEL if unknown else a.display_name,
        execution_label=execution_label(
            a.role, a.ordinal, UNREPORTED_MODEL if unknown else a.model_ref
        ),
        model_spec_digest=None if unknown else model_spec_digest(a),
        binding=binding_record(a.binding, a.execution),
    )
    return participant, execution


def build_execution_manifest(
    assignments: Sequence[ResolvedAssignment],
    dynamic_roles: Iterable[RoleRequirement] = (),
    *,
    leader_model_reported: bool = True,
    writing_roles: Collection[str] = (),
) -> ExecutionManifest:
    """Number participants and role executions, leader first; `dynamic_roles` never bound."""
    ordered = sorted(assignments, key=lambda a: 0 if a.role == LEADER else 1)
    if not ordered or ordered[0].role != LEADER:
        raise ValueError("an assignment plan always has a leader")
    participants: list[Participant] = []
    executions: list[RoleExecution] = []
    for index, a in enumerate(ordered, start=1):
        unknown = (
            a.role == LEADER and a.binding.runner == "current-session" and not leader_model_reported
        )
        participant, execution = bound_execution(
            a,
            f"participant-{index:03d}",
            write_capability=write_capability(a.role, writing_roles),
            unknown=unknown,
        )
        participants.append(participant)
        executions.append(execution)
    return ExecutionManifest(
        entry_mode=ordered[0].entry_mode,
        participants=tuple(participants),
        role_executions=tuple(executions),
        dynamic_roles=tuple(
            DynamicRole(
                role=r.role,
                duty=r.duty,
                worker_write_capability=write_capability(r.role, writing_roles),
            )
            for r in dynamic_roles
        ),
    )
