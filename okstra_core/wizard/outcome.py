"""The confirmation block and the wizard's outcome.

The confirmation lists every value with its provenance — `chosen`, `default:<scope>`,
`reused:<run>`, `converted:v1` — one line per role instance, `(selection required)`
for what is still missing, and dynamic roles as "spawned at run time". The outcome of
a confirmed wizard is the prepare input: a typed `RunRequest` (built and checked
here, once), with `renderArgs` (a map) and `renderArgv` (the same flattened so that
`okstra prepare <renderArgv…>` runs it verbatim) as views of it.

Two blocks tell a consumer what happens around the run, under the names the earlier
okstra's consumers read: `orchestration.chainStages` (the approved plan's stages the
one run carries out one after another; empty without a plan) and `persistActions`
(what preparing the setup writes besides the run directory).
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, computed_field

from ..catalog.models import LEADER, RoleKind
from ..errors import OkstraError
from ..plans import plan_stage_numbers
from ..request import CurrentModel, HostSessionContext, RunRequest
from ..setup_runs import runs_file
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


class _Value(BaseModel):
    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="forbid", defer_build=True)


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


class Orchestration(_Value):
    """How the run is carried out, for consumers that drive several runs.

    Attributes:
        chain_stages: the approved plan's stage numbers, in the plan's order, that the
            one prepared run carries out one after another (the lead starts a stage
            when the previous one is verified). Empty when the task type takes no
            approved plan. The run chains them itself: a consumer launches no
            further run for them.
    """

    chain_stages: tuple[int, ...] = Field(default=(), alias="chainStages")


class PersistAction(_Value):
    """One write that preparing the setup makes besides the run directory.

    Attributes:
        action: `record-setup-run` — the run is appended (`{"at", "runId", "runDir"}`)
            to `path`, so that a second prepare of the same setup is refused unless
            asked for again.
        path: the absolute file written.
        when: `after-prepare` — once a prepare that writes a run (not `--dry-run`)
            has written it.
        by: who carries it out: `okstra prepare --state <setup>` and the app do; a
            consumer that runs `okstra prepare <renderArgv…>` does not get it.
    """

    action: Literal["record-setup-run"]
    path: str
    when: Literal["after-prepare"] = "after-prepare"
    by: str


def persist_actions(state_path: Path) -> tuple[PersistAction, ...]:
    """The writes `okstra prepare --state <state_path>` makes besides the run."""
    state = Path(state_path).absolute()
    return (
        PersistAction(
            action="record-setup-run",
            path=str(runs_file(state)),
            by=f"okstra prepare --state {shlex.quote(str(state))}",
        ),
    )


class Outcome(_Value):
    """What a confirmed wizard produces for prepare: the request and its views.

    Attributes:
        request: the run request (`okstra_core.prepare.prepare` takes it).
        confirmation_text: the confirmation block as plain text.
        orchestration: `chainStages`, the plan stages the run chains.
        persist_actions: the writes preparing the setup makes besides the run.
        render_args, render_argv, provenance: views of the request (computed).
    """

    request: RunRequest
    confirmation_text: str = Field(alias="confirmationText")
    orchestration: Orchestration = Field(default_factory=Orchestration)
    persist_actions: tuple[PersistAction, ...] = Field(default=(), alias="persistActions")

    @computed_field(alias="renderArgs")  # type: ignore[prop-decorator]
    @property
    def render_args(self) -> dict[str, str | list[str]]:
        return self.request.render_args()

    @computed_field(alias="renderArgv")  # type: ignore[prop-decorator]
    @property
    def render_argv(self) -> tuple[str, ...]:
        return self.request.render_argv()

    @computed_field  # type: ignore[prop-decorator]
    @property
    def provenance(self) -> dict[str, str]:
        return dict(self.request.provenance)

    def to_json(self) -> dict[str, Any]:
        """The protocol document: `request`, `renderArgs`, `renderArgv`,
        `confirmationText`, `orchestration`, `persistActions`, `provenance`
        (`okstra wizard schema` describes it)."""
        return self.model_dump(mode="json", by_alias=True)


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


def host_session_context(ctx: StepContext, state: WizardState) -> HostSessionContext:
    """The host session context of the request: host, entry mode, functions, model.

    `currentModel.modelRef` is the host session's model when the host reports it
    (`OKSTRA_HOST_MODEL`), else null: prepare records such a leader's model as unknown.
    """
    host = ctx.host(state.host_runtime)
    return HostSessionContext(
        host_id=state.host_runtime,
        entry_mode=state.host_entry_mode,
        available_functions=tuple(state.available_functions),
        interaction_surface="wizard",
        current_model=CurrentModel(
            provider=host.native_provider,
            model_ref=reported_host_model(ctx),
            effort=reported_host_effort(ctx),
        ),
    )


def build_request(ctx: StepContext, state: WizardState, provenance: dict[str, str]) -> RunRequest:
    """The run request of a complete wizard state (counts in the profile's ranges).

    Raises:
        OkstraError: a value of the state does not have the request's shape.
    """
    profile = ctx.profile(state.task_type)
    counts: dict[str, int] = {}
    for requirement in profile.static_roles:
        if requirement.kind in (RoleKind.ADJUSTABLE, RoleKind.OPTIONAL):
            n = role_count(profile, state, requirement.role)
            if n > 0:
                counts[requirement.role] = n
    models: dict[str, list[str]] = {}
    for role, ordinal in model_instances(profile, state):
        if ordinal <= len(state.role_models.get(role, [])):
            models.setdefault(role, []).append(state.role_models[role][ordinal - 1])
    related = tuple(t.strip() for t in state.related_tasks_raw.split(",") if t.strip())
    try:
        return RunRequest(
            project_root=Path(state.project_root),
            task_group=state.task_group,
            task_id=state.task_id,
            task_type=state.task_type,
            brief=state.brief_path,
            approved_plan=state.approved_plan_path,
            directive=state.directive,
            related_tasks=related,
            host=host_session_context(ctx, state),
            role_counts=counts,
            role_models=models,
            provenance=provenance,
        )
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(part) for part in problem["loc"])
        raise OkstraError(f"{problem['msg']}", field=where) from None


def build_outcome(ctx: StepContext, state: WizardState, state_path: Path | None = None) -> Outcome:
    """The outcome of a confirmed wizard (`state_path`: its file, for `persistActions`).

    Raises:
        OkstraError: the wizard was aborted or is not confirmed yet, or its approved
            plan can no longer be read as approved (file and field named).
    """
    if state.aborted:
        raise OkstraError(ctx.text.get("errors.outcome_aborted"))
    if state.confirmed is not True:
        raise OkstraError(ctx.text.get("errors.outcome_unconfirmed"))
    profile = ctx.profile(state.task_type)
    block = confirmation(ctx, state)
    provenance = {line.key: line.provenance for line in block.lines if line.provenance is not None}
    for requirement in profile.static_roles:
        if requirement.kind in (RoleKind.ADJUSTABLE, RoleKind.OPTIONAL):
            entry = state.entry(count_step(requirement.role, requirement.kind is RoleKind.OPTIONAL))
            if entry is not None:
                provenance[f"count:{requirement.role}"] = entry.provenance
    request = build_request(ctx, state, provenance)
    chain: tuple[int, ...] = ()
    if request.approved_plan:
        chain = plan_stage_numbers(request.approved_plan, project_root=request.project_root)
    return Outcome(
        request=request,
        confirmation_text=block.text,
        orchestration=Orchestration(chain_stages=chain),
        persist_actions=persist_actions(state_path) if state_path is not None else (),
    )
