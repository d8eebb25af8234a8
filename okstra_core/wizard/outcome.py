"""The confirmation block and the wizard's outcome (SPEC §6.6).

The confirmation lists every value with its provenance — `chosen`, `default:<scope>`,
`reused:<run>`, `converted:v1` — one line per role instance, `(selection required)`
for what is still missing, and dynamic roles as "spawned at run time". The outcome of
a confirmed wizard is the prepare input: `renderArgs` (a map) and `renderArgv` (the
same flattened so that `okstra prepare <renderArgv…>` runs it verbatim).
"""

from __future__ import annotations

from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field

from ..catalog.models import LEADER, RoleKind
from ..errors import OkstraError
from .context import StepContext
from .ids import (
    BRIEF,
    DIRECTIVE,
    DIRECTIVE_PICK,
    LEADER_SESSION,
    RELATED_TASKS,
    TASK_ID,
    TASK_PICK,
    TASK_TYPE,
    count_step,
    model_step,
)
from .roles import (
    current_session_model,
    model_instances,
    reported_host_effort,
    reported_host_model,
    role_count,
)
from .state import WizardState

# renderArgs keys, in argv order. `task-key` is informational: prepare derives it
# from group and id, so it is not part of the argv.
ARG_ORDER: tuple[str, ...] = (
    "project-root",
    "task-group",
    "task-id",
    "task-key",
    "task-type",
    "brief",
    "approved-plan",
    "directive",
    "related-tasks",
    "host",
    "entry-mode",
    "role-count",
    "role-model",
    "host-session-context-json",
)
NOT_IN_ARGV = frozenset({"task-key"})


class _Value(BaseModel):
    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="forbid")


class ConfirmationLine(_Value):
    """One line of the confirmation block.

    Attributes:
        key: a stable id (`task`, `brief`, `role:analyser#2`, `dynamic:fixer`, …).
        text: the translated line, without its provenance.
        value: the value shown (None for headings).
        provenance: why the value is there, or None (headings, missing values).
    """

    key: str
    text: str
    value: str | None = None
    provenance: str | None = None

    def to_json(self) -> dict[str, Any]:
        return self.model_dump()


class Confirmation(_Value):
    """The confirmation block: its lines and the plain text (provenance in brackets)."""

    lines: tuple[ConfirmationLine, ...]
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"lines": [line.to_json() for line in self.lines], "text": self.text}


class Outcome(_Value):
    """What a confirmed wizard produces for prepare."""

    render_args: dict[str, str | list[str]] = Field(alias="renderArgs")
    render_argv: tuple[str, ...] = Field(alias="renderArgv")
    confirmation_text: str = Field(alias="confirmationText")
    provenance: dict[str, str]

    def to_json(self) -> dict[str, Any]:
        return {
            "renderArgs": dict(self.render_args),
            "renderArgv": list(self.render_argv),
            "confirmationText": self.confirmation_text,
            "provenance": dict(self.provenance),
        }


def _provenance(state: WizardState, *steps: str) -> str | None:
    for step in steps:
        entry = state.entry(step)
        if entry is not None:
            return entry.provenance
    return None


def confirmation(ctx: StepContext, state: WizardState) -> Confirmation:
    """Build the confirmation block for the current state (complete or not)."""
    text = ctx.text
    missing = text.get("confirmation.missing")
    lines: list[ConfirmationLine] = []

    def add(key: str, template: str, value: str | None, provenance: str | None, **kw: Any) -> None:
        shown = value if value else missing
        lines.append(
            ConfirmationLine(
                key=key,
                text=text.get(template, value=shown, **kw),
                value=value or None,
                provenance=provenance if value else None,
            )
        )

    lines.append(ConfirmationLine(key="header", text=text.get("confirmation.header")))
    mode = text.get(f"confirmation.mode.{state.task_mode}") if state.task_mode else ""
    add(
        "task",
        "confirmation.task",
        state.task_key,
        _provenance(state, TASK_ID, TASK_PICK),
        mode=mode,
    )
    add("brief", "confirmation.brief", state.brief_path, _provenance(state, BRIEF, TASK_PICK))
    add("task-type", "confirmation.task_type", state.task_type, _provenance(state, TASK_TYPE))
    if _needs_approved_plan(ctx, state):
        add(
            "approved-plan",
            "confirmation.approved_plan",
            state.approved_plan_path,
            _provenance(state, "approved_plan"),
        )
    lines.append(
        ConfirmationLine(
            key="host",
            text=text.get(
                "confirmation.host", host=state.host_runtime, entry_mode=state.host_entry_mode
            ),
            value=f"{state.host_runtime} · {state.host_entry_mode}",
        )
    )
    if state.task_type:
        lines.append(ConfirmationLine(key="team", text=text.get("confirmation.team")))
        lines.extend(_team_lines(ctx, state))
    directive = state.directive
    lines.append(
        ConfirmationLine(
            key="directive",
            text=text.get(
                "confirmation.directive", value=directive or text.get("confirmation.none")
            ),
            value=directive or None,
            provenance=_provenance(state, DIRECTIVE, DIRECTIVE_PICK) if directive else None,
        )
    )
    if state.related_tasks_raw:
        add(
            "related-tasks",
            "confirmation.related_tasks",
            state.related_tasks_raw,
            _provenance(state, RELATED_TASKS),
        )
    plain = "\n".join(
        line.text
        + (
            text.get("confirmation.provenance", provenance=line.provenance)
            if line.provenance
            else ""
        )
        for line in lines
    )
    return Confirmation(lines=tuple(lines), text=plain)


def _needs_approved_plan(ctx: StepContext, state: WizardState) -> bool:
    if not state.task_type:
        return False
    try:
        return ctx.profile(state.task_type).needs_approved_plan
    except OkstraError:
        return False


def _team_lines(ctx: StepContext, state: WizardState) -> list[ConfirmationLine]:
    text = ctx.text
    try:
        profile = ctx.profile(state.task_type)
    except OkstraError:
        return []
    out: list[ConfirmationLine] = []
    if state.host_entry_mode == "current-session":
        leader_model = current_session_model(ctx, state)
        out.append(
            ConfirmationLine(
                key="role:leader#1",
                text=text.get(
                    "confirmation.leader_session", role=LEADER, ordinal=1, model=leader_model
                ),
                value=leader_model,
                provenance=_provenance(state, LEADER_SESSION),
            )
        )
    for role, ordinal in model_instances(profile, state):
        models = state.role_models.get(role, [])
        model = models[ordinal - 1] if ordinal <= len(models) else None
        out.append(
            ConfirmationLine(
                key=f"role:{role}#{ordinal}",
                text=text.get(
                    "confirmation.static_role",
                    role=role,
                    ordinal=ordinal,
                    model=model or text.get("confirmation.selection_required"),
                ),
                value=model,
                provenance=_provenance(state, model_step(role, ordinal)) if model else None,
            )
        )
    for requirement in profile.dynamic_roles:
        out.append(
            ConfirmationLine(
                key=f"dynamic:{requirement.role}",
                text=text.get(
                    "confirmation.dynamic_role", role=requirement.role, duty=requirement.duty
                ),
            )
        )
    return out


def host_session_context(ctx: StepContext, state: WizardState) -> dict[str, Any]:
    """The host session context handed to prepare (`--host-session-context-json`).

    `currentModel.modelRef` is the host session's model when the host reports it
    (`OKSTRA_HOST_MODEL`); otherwise null, and prepare uses `<native provider>/current-session`.
    """
    host = ctx.host(state.host_runtime)
    return {
        "hostId": state.host_runtime,
        "entryMode": state.host_entry_mode,
        "availableFunctions": list(state.available_functions),
        "interactionSurface": "wizard",
        "currentModel": {
            "provider": host.native_provider,
            "modelRef": reported_host_model(ctx),
            "effort": reported_host_effort(ctx),
        },
    }


def build_outcome(ctx: StepContext, state: WizardState) -> Outcome:
    """The outcome of a confirmed wizard.

    Raises:
        OkstraError: the wizard was aborted or is not confirmed yet.
    """
    if state.aborted:
        raise OkstraError(ctx.text.get("errors.outcome_aborted"))
    if state.confirmed is not True:
        raise OkstraError(ctx.text.get("errors.outcome_unconfirmed"))
    profile = ctx.profile(state.task_type)
    counts: list[str] = []
    for requirement in profile.static_roles:
        if requirement.kind in (RoleKind.ADJUSTABLE, RoleKind.OPTIONAL):
            n = role_count(profile, state, requirement.role)
            if n > 0:
                counts.append(f"{requirement.role}={n}")
    models = [
        f"{role}={state.role_models[role][ordinal - 1]}"
        for role, ordinal in model_instances(profile, state)
        if ordinal <= len(state.role_models.get(role, []))
    ]
    args: dict[str, str | list[str]] = {
        "project-root": state.project_root,
        "task-group": state.task_group,
        "task-id": state.task_id,
        "task-key": state.task_key,
        "task-type": state.task_type,
        "brief": state.brief_path,
        "approved-plan": state.approved_plan_path,
        "directive": state.directive,
        "related-tasks": state.related_tasks_raw,
        "host": state.host_runtime,
        "entry-mode": state.host_entry_mode,
        "role-count": counts,
        "role-model": models,
        "host-session-context-json": orjson.dumps(
            host_session_context(ctx, state), option=orjson.OPT_SORT_KEYS
        ).decode(),
    }
    argv: list[str] = []
    for key in ARG_ORDER:
        if key in NOT_IN_ARGV:
            continue
        value = args[key]
        for item in value if isinstance(value, list) else [value]:
            if item:
                argv += [f"--{key}", item]
    block = confirmation(ctx, state)
    provenance = {line.key: line.provenance for line in block.lines if line.provenance is not None}
    for requirement in profile.static_roles:
        if requirement.kind in (RoleKind.ADJUSTABLE, RoleKind.OPTIONAL):
            entry = state.entry(count_step(requirement.role, requirement.kind is RoleKind.OPTIONAL))
            if entry is not None:
                provenance[f"count:{requirement.role}"] = entry.provenance
    return Outcome(
        render_args=args,
        render_argv=tuple(argv),
        confirmation_text=block.text,
        provenance=provenance,
    )
