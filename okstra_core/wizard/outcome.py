"""The wizard's outcome: the prepare input of a confirmed wizard.

A typed `RunRequest` (built and checked here, once) with `renderArgs` (a map) and
`renderArgv` (`okstra prepare <renderArgv…>` runs it verbatim) as views, the
confirmation text, `orchestration.chainStages` (the approved plan's stages the one run
chains) and `persistActions` (what preparing the setup writes besides the run).
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any, Literal

from ..catalog.models import RoleKind
from ..errors import OkstraError
from ..plans import plan_stage_numbers
from ..pool import reported_host_effort, reported_host_model
from ..records import RecordError, config, dataclass, field, fields_of, json_schema
from ..request import CurrentModel, HostSessionContext, RunRequest
from ..setup_runs import runs_file
from .base import StepContext
from .confirm import confirmation
from .ids import count_step
from .roles import model_instances, role_count
from .state import WizardState


@dataclass(frozen=True, kw_only=True)
class Orchestration:
    """How the run is carried out, for consumers that drive several runs.

    Attributes:
        chain_stages: the approved plan's stage numbers, in the plan's order, that the
            one prepared run carries out one after another (the lead starts a stage
            when the previous one is verified). Empty when the task type takes no
            approved plan. The run chains them itself: a consumer launches no
            further run for them.
    """

    __pydantic_config__ = config(camel_case=True)

    chain_stages: tuple[int, ...] = ()


@dataclass(frozen=True, kw_only=True)
class PersistAction:
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

    __pydantic_config__ = config()

    action: Literal["record-setup-run"]
    path: str
    when: Literal["after-prepare"] = "after-prepare"
    by: str


def persist_actions(state_path: Path) -> tuple[PersistAction, ...]:
    """The writes `okstra prepare --state <state_path>` makes besides the run."""
    state = Path(state_path).absolute()
    by = f"okstra prepare --state {shlex.quote(str(state))}"
    return (PersistAction(action="record-setup-run", path=str(runs_file(state)), by=by),)


@dataclass(frozen=True, kw_only=True)
class OutcomeViews:
    """The views a consumer reads beside the request (`Outcome`'s `views`), typed: the
    outcome's JSON Schema describes them by this record's (`_outcome_schema`)."""

    __pydantic_config__ = config(camel_case=True)

    render_args: dict[str, str | list[str]]
    render_argv: tuple[str, ...]
    provenance: dict[str, str]


def _outcome_schema(schema: dict[str, Any]) -> None:
    views = json_schema(OutcomeViews, mode="serialization")
    schema.setdefault("properties", {}).update(views["properties"])
    required = schema.setdefault("required", [])
    required.extend(k for k in views["required"] if k not in required)


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """What a confirmed wizard produces for prepare: the request and its views.

    Attributes:
        request: the run request (`okstra_core.prepare.prepare` takes it).
        confirmation_text: the confirmation block as plain text.
        orchestration: `chainStages`, the plan stages the run chains.
        persist_actions: the writes preparing the setup makes besides the run.
        render_args, render_argv, provenance: views of the request.
    """

    # The protocol document: `request`, `confirmationText`, `orchestration`,
    # `persistActions`, then the views `renderArgs`, `renderArgv`, `provenance`
    # (`okstra wizard schema` describes it).
    __pydantic_config__ = config(
        camel_case=True,
        json_schema_extra=_outcome_schema,
        views=("render_args", "render_argv", "provenance"),
        skip=("project_id",),
    )

    request: RunRequest
    confirmation_text: str
    orchestration: Orchestration = field(default_factory=Orchestration)
    persist_actions: tuple[PersistAction, ...] = ()
    # The project's id, for the earlier `project-id` key of `renderArgs` ("": unknown).
    project_id: str = ""

    @property
    def render_args(self) -> dict[str, str | list[str]]:
        """The request's flags, and beside them the earlier okstra's keys that have a
        value here (`task-brief`, `project-id`, `lead-runtime`, `stage`, `stages`):
        read by consumers of the map, never part of `renderArgv`."""
        args = self.request.render_args()
        stages = self.orchestration.chain_stages
        earlier: dict[str, str] = {
            "task-brief": self.request.brief,
            "project-id": self.project_id,
            "lead-runtime": self.request.host.host_id or "",
            "stage": str(stages[0]) if stages else "",
            "stages": ",".join(str(n) for n in stages),
        }
        args.update({key: value for key, value in earlier.items() if value})
        return args

    @property
    def render_argv(self) -> tuple[str, ...]:
        return self.request.render_argv()

    @property
    def provenance(self) -> dict[str, str]:
        return dict(self.request.provenance)


def host_session_context(ctx: StepContext, state: WizardState) -> HostSessionContext:
    """The request's host session context; `currentModel.modelRef` is null unless the
    host reports its model (`OKSTRA_HOST_MODEL`)."""
    host = ctx.host(state.host_runtime)
    return HostSessionContext(
        host_id=state.host_runtime,
        entry_mode=state.host_entry_mode,
        available_functions=tuple(state.available_functions),
        interaction_surface="wizard",
        current_model=CurrentModel(
            provider=host.native_provider,
            model_ref=reported_host_model(ctx.environment, ctx.pool),
            effort=reported_host_effort(ctx.environment),
        ),
    )


def build_request(ctx: StepContext, state: WizardState, provenance: dict[str, str]) -> RunRequest:
    """The run request of a complete wizard state (`OkstraError`: a value of the state
    does not have the request's shape)."""
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
            **fields_of(state, "task_group task_id task_type directive"),
            brief=state.brief_path,
            approved_plan=state.approved_plan_path,
            base_ref=state.run_base,
            related_tasks=related,
            host=host_session_context(ctx, state),
            role_counts=counts,
            role_models=models,
            provenance=provenance,
        )
    except RecordError as exc:
        where, message = exc.first()
        raise OkstraError(message, field=where) from None


def build_outcome(ctx: StepContext, state: WizardState, state_path: Path | None = None) -> Outcome:
    """The outcome of a confirmed wizard (`state_path`: its file, for `persistActions`);
    `OkstraError` if aborted, not confirmed yet, or its plan is no longer approved."""
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
        project_id=_project_id(request.project_root),
    )


def _project_id(root: Path) -> str:
    """The project's id as prepare will use it ("": its config does not read)."""
    from ..catalog import load_project_config
    from ..tasks import slugify

    try:
        configured = load_project_config(root).project_id
    except OkstraError:
        return ""
    return configured or slugify(root.name) or "project"
