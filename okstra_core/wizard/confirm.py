"""The confirmation block: every value of the setup with its provenance (`chosen`,
`default:<scope>`, `reused:<run>`, `converted:v1`), one line per role instance,
`(selection required)` for what is missing, dynamic roles "spawned at run time"."""

from __future__ import annotations

from typing import Any

from ..binding import choose_runner
from ..catalog.models import LEADER
from ..errors import OkstraError
from ..records import config, dataclass
from ..vocabulary import CLI_WRAPPER, CURRENT_SESSION
from . import ids
from .base import StepContext
from .roles import current_session_model, model_instances
from .state import WizardState


@dataclass(frozen=True)
class ConfirmationLine:
    """One line of the confirmation block: a stable key (`role:analyser#2`, …), the text
    without its provenance, and the value and its provenance (None: none shown)."""

    __pydantic_config__ = config()

    key: str
    text: str
    value: str | None = None
    provenance: str | None = None


@dataclass(frozen=True)
class Confirmation:
    """The confirmation block: its lines and the plain text (provenance in brackets)."""

    __pydantic_config__ = config()

    lines: tuple[ConfirmationLine, ...]
    text: str


def provenance_of(state: WizardState, *steps: str) -> str | None:
    """The provenance of the first of `steps` that is answered."""
    return next((e.provenance for s in steps if (e := state.entry(s)) is not None), None)


def confirmation(ctx: StepContext, state: WizardState) -> Confirmation:
    """Build the confirmation block for the current state (complete or not)."""
    text = ctx.text
    missing = text.get("confirmation.missing")
    lines = [ConfirmationLine(key="header", text=text.get("confirmation.header"))]

    def add(key: str, value: str, *steps: str, empty: str = missing, **kw: Any) -> None:
        """The line `confirmation.<key>` of a value (`empty`: shown for none), its
        provenance from `steps`."""
        template = f"confirmation.{key.replace('-', '_')}"
        line = text.get(template, value=value or empty, **kw)
        provenance = provenance_of(state, *steps) if value else None
        lines.append(ConfirmationLine(key, line, value or None, provenance))

    mode = text.get(f"confirmation.mode.{state.task_mode}") if state.task_mode else ""
    add("task", state.task_key, ids.TASK_ID, ids.TASK_PICK, mode=mode)
    add("brief", state.brief_path, ids.BRIEF, ids.TASK_PICK)
    add("task-type", state.task_type, ids.TASK_TYPE)
    if needs_approved_plan(ctx, state):
        add("approved-plan", state.approved_plan_path, "approved_plan")
    if state.run_base:
        add("base-ref", state.run_base, ids.BASE_REF)
    host, entry = state.host_runtime, state.host_entry_mode
    host_line = text.get("confirmation.host", host=host, entry_mode=entry)
    lines.append(ConfirmationLine("host", host_line, f"{host} · {entry}"))
    if state.task_type:
        lines.append(ConfirmationLine(key="team", text=text.get("confirmation.team")))
        lines.extend(_team_lines(ctx, state))
    none = text.get("confirmation.none")
    add("directive", state.directive, ids.DIRECTIVE, ids.DIRECTIVE_PICK, empty=none)
    if state.related_tasks_raw:
        add("related-tasks", state.related_tasks_raw, ids.RELATED_TASKS)
    plain = "\n".join(
        line.text + text.get("confirmation.provenance", provenance=line.provenance)
        if line.provenance
        else line.text
        for line in lines
    )
    return Confirmation(lines=tuple(lines), text=plain)


def needs_approved_plan(ctx: StepContext, state: WizardState) -> bool:
    """Whether the chosen task type takes an approved plan (False until one is chosen)."""
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
    if state.host_entry_mode == CURRENT_SESSION:
        leader = current_session_model(ctx, state)
        line = text.get("confirmation.leader_session", role=LEADER, ordinal=1, model=leader)
        provenance = provenance_of(state, ids.LEADER_SESSION)
        out.append(ConfirmationLine("role:leader#1", line, leader, provenance))
    for role, ordinal in model_instances(profile, state):
        models = state.role_models.get(role, [])
        model = models[ordinal - 1] if ordinal <= len(models) else None
        shown = model or text.get("confirmation.selection_required")
        line = text.get("confirmation.static_role", role=role, ordinal=ordinal, model=shown)
        provenance = provenance_of(state, ids.model_step(role, ordinal)) if model else None
        out.append(ConfirmationLine(f"role:{role}#{ordinal}", line, model, provenance))
        refused = _not_ready_line(ctx, state, role, ordinal, model) if model else None
        if refused is not None:
            out.append(refused)
    for requirement in profile.dynamic_roles:
        line = text.get("confirmation.dynamic_role", role=requirement.role, duty=requirement.duty)
        out.append(ConfirmationLine(f"dynamic:{requirement.role}", line))
    return out


def _not_ready_line(
    ctx: StepContext, state: WizardState, role: str, ordinal: int, ref: str
) -> ConfirmationLine | None:
    """A line naming a member whose CLI prepare's preflight would refuse, with its
    reason (`Readiness.refusal`), or None."""
    try:
        host = ctx.host(state.host_runtime)
    except OkstraError:
        return None
    model = ctx.pool.get(ref)
    if model is None or (
        choose_runner(role, model.provider_id, host, state.host_entry_mode) != CLI_WRAPPER
    ):
        return None
    refusal = ctx.pool.readiness(model.provider).refusal(lead=role == LEADER)
    if refusal is None:
        return None
    problem, remedy = refusal
    return ConfirmationLine(
        key=f"not-ready:{role}#{ordinal}",
        text=ctx.text.get(
            "confirmation.not_ready",
            role=role,
            ordinal=ordinal,
            model=ref,
            reason=f"{problem} — {remedy}" if remedy else problem,
        ),
    )
