"""The documents of one run: `run-inputs.json`, `run-manifest.json`, `lead-prompt.meta.json`.

`run-inputs.json` is the run request, dumped (plus the run id and the argv that
replays it). `run-manifest.json` carries the execution identity at its top level:
`participants`, `roleExecutions`, `dynamicRoles`, with `schemaVersion` "2.0" and
`executionIdentityVersion` 2. Files of the previous layout (inputs nested under
`inputs` as flag strings; the identity nested under `executionManifest`) are upgraded
when read.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, StrictInt, StrictStr, model_validator

from ..catalog.models import Runner
from ..request import RunRequest
from .base import Document

__all__ = [
    "EXECUTION_IDENTITY_VERSION",
    "SCHEMA_VERSION",
    "ApprovedPlanRef",
    "BindingRecord",
    "DynamicRole",
    "FileRef",
    "LeadPromptMeta",
    "Participant",
    "RoleExecution",
    "RunInputs",
    "RunManifest",
]

SCHEMA_VERSION: Literal["2.0"] = "2.0"
EXECUTION_IDENTITY_VERSION: Literal[2] = 2
SERVED_MODEL_UNKNOWN = "unknown"


def _pairs(raw: Any, *, integer: bool) -> Any:
    """`["role=value", …]` (the previous layout) → a map; anything else as is."""
    if not isinstance(raw, list) or not all(isinstance(i, str) and "=" in i for i in raw):
        return raw
    out: dict[str, Any] = {}
    for item in raw:
        role, _, value = item.partition("=")
        role, value = role.strip(), value.strip()
        if integer:
            out[role] = int(value) if value.isdigit() else value
        else:
            out.setdefault(role, []).append(value)
    return out


def _upgrade_inputs(data: dict[str, Any]) -> dict[str, Any]:
    """The previous layout of run-inputs.json, in this version's shape."""
    old = data["inputs"]
    if not isinstance(old, dict):
        return data  # refused by validation, naming `inputs`
    context = old.get("hostSessionContext")
    context = dict(context) if isinstance(context, dict) else {}
    known = {
        "hostId",
        "entryMode",
        "availableFunctions",
        "interactionSurface",
        "currentModel",
        "currentModelRef",
    }
    context = {k: v for k, v in context.items() if k in known}
    if old.get("host") and "hostId" not in context:
        context["hostId"] = old["host"]
    if old.get("entryMode") and "entryMode" not in context:
        context["entryMode"] = old["entryMode"]
    related = old.get("relatedTasks", "")
    if isinstance(related, str):
        related = [t.strip() for t in related.split(",") if t.strip()]
    upgraded = {
        "schemaVersion": SCHEMA_VERSION,
        "runId": data.get("runId"),
        "projectRoot": old.get("projectRoot"),
        "taskGroup": old.get("taskGroup"),
        "taskId": old.get("taskId"),
        "taskType": old.get("taskType"),
        "brief": old.get("brief"),
        "approvedPlan": old.get("approvedPlan") or "",
        "directive": old.get("directive") or "",
        "relatedTasks": related,
        "host": context,
        "roleCounts": _pairs(old.get("roleCounts", {}), integer=True),
        "roleModels": _pairs(old.get("roleModels", {}), integer=False),
        "argv": old.get("argv") or [],
    }
    return upgraded


class RunInputs(RunRequest, Document):
    """`run-inputs.json`: the run request as prepared, immutable once written.

    Attributes:
        schema_version: "2.0".
        run_id: `<task-type>-<seq>`.
        argv: the renderArgv that replays this request (`okstra prepare <argv…>`).
    """

    WHAT: ClassVar[str] = "run inputs"
    schema_version: Literal["2.0"] = SCHEMA_VERSION
    run_id: StrictStr
    argv: tuple[StrictStr, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _previous_layout(cls, data: Any) -> Any:
        if isinstance(data, dict) and "inputs" in data and "taskType" not in data:
            return _upgrade_inputs(data)
        return data

    @classmethod
    def of(cls, request: RunRequest, run_id: str) -> RunInputs:
        return cls(
            **dict(request),
            run_id=run_id,
            argv=request.render_argv(),
        )

    @property
    def request(self) -> RunRequest:
        """The request alone (what `okstra prepare <argv…>` parses back to)."""
        fields = {name: getattr(self, name) for name in RunRequest.model_fields}
        return RunRequest(**fields)


class BindingRecord(Document):
    """How a role execution runs: runner, host runtime, host model value."""

    runner: Runner
    host_runtime: StrictStr
    host_model_value: StrictStr | None = None
    execution_value: StrictStr = ""


class Participant(Document):
    """One agent session of the run (`participant-001` is always the leader)."""

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
    launch_backend: StrictStr | None = None
    launched_at: StrictStr | None = None


class RoleExecution(Document):
    """One role instance of the run, bound to its participant.

    A current-session leader whose model the host did not report has `model_ref`,
    `model_id` and `model_spec_digest` null.
    """

    role_execution_ref: StrictStr
    participant_ref: StrictStr
    role: StrictStr
    duty: StrictStr = Field(alias="dutyId")
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


class DynamicRole(Document):
    """A role the lead spawns at run time (never bound at prepare)."""

    role: StrictStr
    duty: StrictStr = Field(alias="dutyId")


class FileRef(Document):
    path: StrictStr
    sha256: StrictStr


class ApprovedPlanRef(Document):
    path: StrictStr
    sha256: StrictStr
    stages: tuple[StrictInt, ...]


class RunManifest(Document):
    """`run-manifest.json`: who runs which role instance, on which model."""

    WHAT: ClassVar[str] = "run manifest"
    schema_version: Literal["2.0"] = SCHEMA_VERSION
    execution_identity_version: Literal[2] = EXECUTION_IDENTITY_VERSION
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
    paths: dict[StrictStr, StrictStr]
    participants: tuple[Participant, ...] = Field(min_length=1)
    role_executions: tuple[RoleExecution, ...] = Field(min_length=1)
    dynamic_roles: tuple[DynamicRole, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _previous_layout(cls, data: Any) -> Any:
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


class LeadPromptMeta(Document):
    """`lead-prompt.meta.json`: the invocation identity of the rendered lead prompt."""

    WHAT: ClassVar[str] = "lead prompt meta"
    invocation_id: StrictStr
    participant_ref: StrictStr
    role_execution_ref: StrictStr
    duty: StrictStr = Field(alias="dutyId")
    attempt: StrictInt = 1
    prompt_sha256: StrictStr
    prompt_path: StrictStr
