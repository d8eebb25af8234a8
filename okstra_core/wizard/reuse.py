"""The `reuse_previous` step: a previous run's team taken over as answers.

Asked for an existing task with a run of the chosen task type. Reusing it pre-fills the
role counts and models the run ran with (its `run-manifest.json` roster, else its
`run-inputs.json`), its directive and related tasks, each an answered step with
provenance `reused:<run>`. Reused models are re-checked like any answer (one that no
longer fits is rewound with the reason); the option is disabled, with why, when the
reused counts lead to no complete team.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..catalog.models import LEADER, Profile, RoleKind
from ..errors import AnswerRefused, OkstraError
from ..records import dataclass
from ..resolver import blocker
from ..vocabulary import CURRENT_SESSION
from . import ids
from .base import StepContext, make_prompt, refuse
from .prompt import Option, Prompt
from .roles import model_instances, team_query
from .state import EXISTING_TASK, AnsweredStep, WizardState

if TYPE_CHECKING:
    from ..documents.inputs import RunInputs
    from ..documents.run import RunManifest
    from ..tasks import RunRef, TaskEntry


def current_task(ctx: StepContext, state: WizardState) -> TaskEntry | None:
    """The existing task the setup is for (None for a new task or none chosen)."""
    if state.task_mode != EXISTING_TASK or not state.task_key:
        return None
    from ..tasks import find_task  # a role step needs no task lookup

    return next((t for t in ctx.tasks if t.key == state.task_key), None) or find_task(
        Path(state.project_root), state.task_key
    )


@dataclass(frozen=True, kw_only=True)
class ReusedTeam:
    """What a reuse takes from a run: each role's count (but the leader's) and model
    refs, its directive and related tasks; `whole_roster`: the counts are the run's
    whole roster (its manifest), so an optional role it did not have ran with none."""

    counts: dict[str, int]
    models: dict[str, list[str]]
    directive: str = ""
    related_tasks: tuple[str, ...] = ()
    whole_roster: bool = False


_Record = Callable[[str, str], None]


def _reuse_counts(
    profile: Profile, state: WizardState, reused: ReusedTeam, record: _Record
) -> None:
    """The reused counts that still fit the profile (adjustable roles, then optional)."""
    for wanted in (RoleKind.ADJUSTABLE, RoleKind.OPTIONAL):
        for requirement in profile.static_roles:
            value = reused.counts.get(requirement.role)
            if value is None and reused.whole_roster and wanted is RoleKind.OPTIONAL:
                value = 0
            if requirement.kind is not wanted or not isinstance(value, int):
                continue
            if requirement.min <= value <= requirement.max:
                state.role_counts[requirement.role] = value
                record(ids.count_step(requirement.role, wanted is RoleKind.OPTIONAL), str(value))


def _reuse_models(
    profile: Profile, state: WizardState, reused: ReusedTeam, record: _Record
) -> None:
    """The reused models of the roles whose count is settled (fixed or reused); the
    others' models are asked after their count."""
    settled = {LEADER} | {
        r.role
        for r in profile.static_roles
        if r.kind is RoleKind.FIXED or r.role in state.role_counts
    }
    for role, ordinal in model_instances(profile, state):
        if role in settled:
            refs = reused.models.get(role, [])
            have = state.role_models.get(role, [])
            # Only a gap-free prefix of each role's models can be kept.
            if ordinal <= len(refs) and len(have) == ordinal - 1:
                state.role_models.setdefault(role, []).append(refs[ordinal - 1])
                record(ids.model_step(role, ordinal), refs[ordinal - 1])


def prefill_from_run(ctx: StepContext, state: WizardState, reused: ReusedTeam, run: str) -> None:
    """Pre-fill counts, models, directive and related tasks from a previous run, each
    an answered step with provenance `reused:<run>`; values that no longer fit the
    profile are skipped (asked), models that no longer fit rewound by the next prompt."""
    directive = reused.directive
    provenance = f"reused:{run}"
    profile = ctx.profile(state.task_type)
    entries: list[AnsweredStep] = []

    def record(step: str, answer: str) -> None:
        entries.append(AnsweredStep(step=step, answer=answer, provenance=provenance))
        if ids.is_role_step(step):
            state.role_selection_order.append(step)

    state.role_counts.clear()
    state.role_models.clear()
    if state.host_entry_mode == CURRENT_SESSION:
        record(ids.LEADER_SESSION, ids.LEADER_SESSION_ANSWER)
    _reuse_counts(profile, state, reused, record)
    _reuse_models(profile, state, reused, record)
    if directive.strip():
        state.directive = directive.strip()
        record(ids.DIRECTIVE_PICK, ids.WRITE_ANSWER)
        record(ids.DIRECTIVE, state.directive)
    else:
        state.directive = ""
        record(ids.DIRECTIVE_PICK, ids.SKIP_ANSWER)
    _reuse_related(ctx, state, [k for k in reused.related_tasks if k], record)
    state.answered.extend(e for e in entries if not state.is_answered(e.step))


def _reuse_related(ctx: StepContext, state: WizardState, keys: list[str], record: _Record) -> None:
    """The reused run's related tasks that still exist here; none: "skip". Asked as
    usual when the project has no other task or none of the run's is left."""
    known = {t.key for t in ctx.tasks if t.key != state.task_key and t.error is None}
    if not known:
        return
    kept = [k for k in keys if k in known]
    if kept:
        state.related_tasks_raw = ",".join(dict.fromkeys(kept))
        record(ids.RELATED_TASKS_PICK, ids.CHOOSE_ANSWER)
        record(ids.RELATED_TASKS, state.related_tasks_raw)
    elif not keys:
        state.related_tasks_raw = ""
        record(ids.RELATED_TASKS_PICK, ids.SKIP_ANSWER)


def reuse_blocker(ctx: StepContext, state: WizardState, reused: ReusedTeam, run: str) -> str | None:
    """Why reusing that run's team leads to no complete team (None: it does not); only
    the counts matter (reused models that no longer fit are asked again later)."""
    work = state.copy()
    prefill_from_run(ctx, work, reused, run)
    work.role_models = {}
    found = blocker(team_query(ctx, work, ctx.profile(work.task_type)).smallest())
    return None if found is None else found.advice


def _latest_run(ctx: StepContext, state: WizardState) -> RunRef | None:
    task = current_task(ctx, state)
    return task.latest_run(state.task_type) if task else None


def reuse_applies(ctx: StepContext, state: WizardState) -> bool:
    return bool(state.task_type) and _latest_run(ctx, state) is not None


def _read_run(run: RunRef) -> ReusedTeam:
    """What reusing `run` takes (`OkstraError`: its inputs or manifest do not read)."""
    # The documents load only when a run is reused. The run-inputs model reads this
    # version's file or the previous layout (nested `inputs`, `role=value` strings).
    from ..documents.inputs import RunInputs
    from ..documents.run import RunManifest

    inputs = RunInputs.read(run.inputs_path)
    path = run.path / "run-manifest.json"
    return _reused(inputs, RunManifest.read(path) if path.exists() else None)


def _reused(inputs: RunInputs, manifest: RunManifest | None) -> ReusedTeam:
    """The run's counts and models (its manifest's role executions by role and ordinal,
    else its inputs' choices), directive and related tasks."""
    counts: dict[str, int] = dict(inputs.role_counts)
    models: dict[str, list[str]] = {role: list(refs) for role, refs in inputs.role_models.items()}
    if manifest is not None:
        roster: dict[str, list[tuple[int, str | None]]] = {}
        for execution in manifest.role_executions:
            if execution.source_role_execution_ref is None:
                roster.setdefault(execution.role, []).append(
                    (execution.ordinal, execution.model_ref)
                )
        counts = {role: len(rows) for role, rows in roster.items() if role != LEADER}
        models = {}
        for role, rows in roster.items():
            refs = [ref for _n, ref in sorted(rows)]
            # A prefix: a current-session lead the host did not report has no model.
            kept = refs[: next((i for i, r in enumerate(refs) if r is None), len(refs))]
            if kept:
                models[role] = [r for r in kept if r is not None]
    return ReusedTeam(
        counts=counts,
        models=models,
        directive=inputs.directive,
        related_tasks=inputs.related_tasks,
        whole_roster=manifest is not None,
    )


def reuse_build(ctx: StepContext, state: WizardState) -> Prompt:
    run = _latest_run(ctx, state)
    run_name = run.name if run else ""
    why: str | None = None
    if run is not None:
        try:
            reused = _read_run(run)
        except OkstraError as exc:
            why = exc.render()
        else:
            why = reuse_blocker(ctx, state, reused, run.name)
    options = tuple(
        Option(
            value=v,
            label=ctx.text.get(f"reuse_previous.option.{v}", run=run_name),
            disabled_reason=why if v == ids.REUSE_ANSWER else None,
        )
        for v in (ids.REUSE_ANSWER, ids.CHOOSE_AGAIN_ANSWER)
    )
    return make_prompt(
        ctx,
        state,
        ids.REUSE_PREVIOUS,
        "pick",
        "reuse_previous",
        options=options,
        default=ids.REUSE_ANSWER if why is None else ids.CHOOSE_AGAIN_ANSWER,
        label_values={"run": run_name},
        meta={"run": run_name},
    )


def reuse_submit(ctx: StepContext, state: WizardState, answer: str, _p: Prompt) -> str:
    if answer != ids.REUSE_ANSWER:
        return ""
    run = _latest_run(ctx, state)
    if run is None:
        raise refuse(ctx, "no_previous_run", task_type=state.task_type)
    try:
        reused = _read_run(run)
    except OkstraError as exc:
        raise AnswerRefused(exc.render()) from None
    prefill_from_run(ctx, state, reused, run.name)
    return run.name
