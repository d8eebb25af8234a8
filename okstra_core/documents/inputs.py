"""`run-inputs.json`: the run request as prepared, with the run id and the argv that
replays it. The previous layout (inputs nested under `inputs`, `role=value` strings,
comma-separated related tasks) is upgraded when read.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from ..records import dataclass
from ..request import RunRequest
from .base import SCHEMA_VERSION, Document
from .host import older_spellings

if TYPE_CHECKING:
    from pydantic import StrictStr


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


# The keys of the previous layout's host session context that this version reads.
_CONTEXT_KEYS = (
    "hostId", "entryMode", "availableFunctions", "interactionSurface", "currentModel",
    "currentModelRef",
)  # fmt: skip


def _upgrade_inputs(data: dict[str, Any]) -> dict[str, Any]:
    """The previous layout of run-inputs.json, in this version's shape."""
    old = data["inputs"]
    if not isinstance(old, dict):
        return data  # refused by validation, naming `inputs`
    context = old.get("hostSessionContext")
    context = dict(context) if isinstance(context, dict) else {}
    context = {k: v for k, v in context.items() if k in _CONTEXT_KEYS}
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


@dataclass(frozen=True, kw_only=True)
class RunInputs(RunRequest, Document):
    """`run-inputs.json`: the run request as prepared, immutable once written.

    Attributes:
        schema_version: "2.0".
        run_id: `<task-type>-<seq>`.
        argv: the canonical argv that reruns this run (`okstra prepare <argv…>`): the
            request with the team okstra resolved (every chosen model and count, the
            defaults it filled included), so a rerun gets the same team whatever the
            defaults are then.
        lead_provider, report_writer_model, executor, task_brief_path: the earlier
            okstra's keys, for scripts that read them: the leader's provider, the
            report writer's model ref, the implementer's provider ("" without one) and
            the brief as given.
    """

    # The request's config is inherited: camelCase, and its rules in the schema.
    WHAT: ClassVar[str] = "run inputs"

    schema_version: Literal["2.0"] = SCHEMA_VERSION
    run_id: StrictStr
    argv: tuple[StrictStr, ...] = ()
    lead_provider: StrictStr = ""
    report_writer_model: StrictStr = ""
    executor: StrictStr = ""
    task_brief_path: StrictStr = ""

    @classmethod
    def _upgrade(cls, data: Any) -> Any:
        if isinstance(data, dict) and "inputs" in data and "taskType" not in data:
            data = _upgrade_inputs(data)
        if isinstance(data, dict) and isinstance(data.get("host"), dict):
            data = {**data, "host": older_spellings(data["host"])}
        return data

    @classmethod
    def of(
        cls,
        request: RunRequest,
        run_id: str,
        *,
        team: Sequence[tuple[str, str, str | None]] = (),
        counts: Mapping[str, int] | None = None,
    ) -> RunInputs:
        """The document of `request` as prepared: `team` is (role, provider, model ref or
        None) of each role instance in order; `counts` the resolved role counts."""
        fields = {f.name: getattr(request, f.name) for f in dataclasses.fields(RunRequest)}
        models: dict[str, list[str]] = {}
        for role, _, ref in team:
            if ref is not None:
                models.setdefault(role, []).append(ref)
        rerun = dataclasses.replace(
            request,
            role_models=models or dict(request.role_models),
            role_counts=dict(request.role_counts if counts is None else counts),
        )

        def first(role: str) -> tuple[str, str]:
            return next(((p, ref or "") for r, p, ref in team if r == role), ("", ""))

        return cls(
            **fields,
            run_id=run_id,
            argv=rerun.render_argv(),
            lead_provider=first("leader")[0],
            report_writer_model=first("report-writer")[1],
            executor=first("implementer")[0],
            task_brief_path=request.brief,
        )

    @property
    def request(self) -> RunRequest:
        """The request alone (what `okstra prepare <argv…>` parses back to)."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(RunRequest)}
        return RunRequest(**fields)
