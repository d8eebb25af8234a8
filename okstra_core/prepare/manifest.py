"""The execution manifest: who runs which role instance, on which model (SPEC §8 step 4).

A *participant* is one agent session (`participant-001` is always the leader); a
*role execution* is one role instance bound to a participant
(`role-exec-<role>-<ordinal:03d>`). The final report's `executionRoles` must equal
this set exactly (see `okstra_core.report`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import orjson

from ..catalog.models import LEADER

SERVED_MODEL_UNKNOWN = "unknown"
STATUS_PREPARED = "prepared"
STATUS_LAUNCHED = "launched"


class BindingLike(Protocol):
    """What the manifest reads of `okstra_core.binding.Binding`."""

    @property
    def runner(self) -> str: ...
    @property
    def host_runtime(self) -> str: ...
    @property
    def host_model_value(self) -> str | None: ...


class AssignmentLike(Protocol):
    """What the manifest reads of `okstra_core.resolver.ResolvedAssignment`."""

    @property
    def role(self) -> str: ...
    @property
    def ordinal(self) -> int: ...
    @property
    def duty(self) -> str: ...
    @property
    def provider_id(self) -> str: ...
    @property
    def model_ref(self) -> str: ...
    @property
    def model_id(self) -> str: ...
    @property
    def display_name(self) -> str: ...
    @property
    def execution(self) -> str: ...
    @property
    def binding(self) -> BindingLike: ...
    @property
    def host_runtime(self) -> str: ...
    @property
    def entry_mode(self) -> str: ...
    @property
    def provenance(self) -> str: ...


class RequirementLike(Protocol):
    @property
    def role(self) -> str: ...
    @property
    def duty(self) -> str: ...


@dataclass(frozen=True)
class Participant:
    """One agent session of the run."""

    participant_ref: str
    role: str
    provider: str
    model_ref: str
    model_id: str
    runner: str
    host_runtime: str
    host_model_value: str | None
    entry_mode: str
    session_ref: str | None = None
    window_ref: str | None = None
    status: str = STATUS_PREPARED

    def to_json(self) -> dict[str, Any]:
        return {
            "participantRef": self.participant_ref,
            "role": self.role,
            "provider": self.provider,
            "modelRef": self.model_ref,
            "modelId": self.model_id,
            "runner": self.runner,
            "hostRuntime": self.host_runtime,
            "hostModelValue": self.host_model_value,
            "sessionRef": self.session_ref,
            "windowRef": self.window_ref,
            "entryMode": self.entry_mode,
            "status": self.status,
        }


@dataclass(frozen=True)
class RoleExecution:
    """One role instance of the run, bound to its participant."""

    role_execution_ref: str
    participant_ref: str
    role: str
    duty: str
    provider: str
    model_ref: str
    model_id: str
    display_name: str
    execution: str
    ordinal: int
    execution_label: str
    model_spec_digest: str
    binding: dict[str, Any]
    provenance: str
    served_model_attestation: str = SERVED_MODEL_UNKNOWN
    status: str = STATUS_PREPARED

    def to_json(self) -> dict[str, Any]:
        return {
            "roleExecutionRef": self.role_execution_ref,
            "participantRef": self.participant_ref,
            "role": self.role,
            "dutyId": self.duty,
            "provider": self.provider,
            "modelRef": self.model_ref,
            "modelId": self.model_id,
            "displayName": self.display_name,
            "execution": self.execution,
            "ordinal": self.ordinal,
            "executionLabel": self.execution_label,
            "modelSpecDigest": self.model_spec_digest,
            "binding": dict(self.binding),
            "provenance": self.provenance,
            "servedModelAttestation": self.served_model_attestation,
            "status": self.status,
        }


@dataclass(frozen=True)
class ExecutionManifest:
    """Participants, role executions and the roles the lead spawns at run time."""

    entry_mode: str
    participants: tuple[Participant, ...]
    role_executions: tuple[RoleExecution, ...]
    dynamic_roles: tuple[tuple[str, str], ...]  # (role, duty)

    @property
    def leader(self) -> RoleExecution:
        return self.role_executions[0]

    def to_json(self) -> dict[str, Any]:
        return {
            "entryMode": self.entry_mode,
            "participants": [p.to_json() for p in self.participants],
            "roleExecutions": [r.to_json() for r in self.role_executions],
            "dynamicRoles": [{"role": r, "dutyId": d} for r, d in self.dynamic_roles],
        }


def role_execution_ref(role: str, ordinal: int) -> str:
    return f"role-exec-{role}-{ordinal:03d}"


def execution_label(role: str, ordinal: int, model_ref: str) -> str:
    """`analyser#2 · codex/gpt-5.6-sol`."""
    return f"{role}#{ordinal} · {model_ref}"


def binding_json(binding: BindingLike, execution: str) -> dict[str, Any]:
    return {
        "runner": binding.runner,
        "hostRuntime": binding.host_runtime,
        "hostModelValue": binding.host_model_value,
        "executionValue": execution,
    }


def model_spec_digest(assignment: AssignmentLike) -> str:
    """sha256 of the canonical JSON of the model spec and its binding.

    Two runs that bound the same model the same way share a digest; any change to
    the model's execution value, provider or binding changes it.
    """
    spec = {
        "model": {
            "modelRef": assignment.model_ref,
            "provider": assignment.provider_id,
            "modelId": assignment.model_id,
            "display": assignment.display_name,
            "execution": assignment.execution,
        },
        "binding": binding_json(assignment.binding, assignment.execution),
    }
    canonical = orjson.dumps(spec, option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(canonical).hexdigest()


def build_execution_manifest(
    assignments: Sequence[AssignmentLike],
    dynamic_roles: Iterable[RequirementLike] = (),
) -> ExecutionManifest:
    """Number participants and role executions, leader first.

    Args:
        assignments: the resolved plan's assignments; the leader's must be among them.
        dynamic_roles: roles the lead spawns at run time (listed, never bound here).
    """
    ordered = sorted(assignments, key=lambda a: 0 if a.role == LEADER else 1)
    if not ordered or ordered[0].role != LEADER:
        raise ValueError("an assignment plan always has a leader")
    participants: list[Participant] = []
    executions: list[RoleExecution] = []
    for index, a in enumerate(ordered, start=1):
        ref = f"participant-{index:03d}"
        participants.append(
            Participant(
                participant_ref=ref,
                role=a.role,
                provider=a.provider_id,
                model_ref=a.model_ref,
                model_id=a.model_id,
                runner=a.binding.runner,
                host_runtime=a.host_runtime,
                host_model_value=a.binding.host_model_value,
                entry_mode=a.entry_mode,
            )
        )
        executions.append(
            RoleExecution(
                role_execution_ref=role_execution_ref(a.role, a.ordinal),
                participant_ref=ref,
                role=a.role,
                duty=a.duty,
                provider=a.provider_id,
                model_ref=a.model_ref,
                model_id=a.model_id,
                display_name=a.display_name,
                execution=a.execution,
                ordinal=a.ordinal,
                execution_label=execution_label(a.role, a.ordinal, a.model_ref),
                model_spec_digest=model_spec_digest(a),
                binding=binding_json(a.binding, a.execution),
                provenance=a.provenance,
            )
        )
    return ExecutionManifest(
        entry_mode=ordered[0].entry_mode,
        participants=tuple(participants),
        role_executions=tuple(executions),
        dynamic_roles=tuple((r.role, r.duty) for r in dynamic_roles),
    )
