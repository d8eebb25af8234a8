"""The `reuse_previous` step: a previous run's team taken over as answers.

Asked for an existing task with a run of the chosen task type: reusing it pre-fills the
role counts, the role models and the directive from the run's `run-inputs.json`, each
an answered step with provenance `reused:<run>` (listed and editable like any answer).
The option is disabled, with why, when the reused counts lead to no complete team.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..catalog.models import LEADER, Profile, RoleKind
from ..errors import AnswerRefused, OkstraError
from ..resolver import blocker
from ..vocabulary import CURRENT_SESSION
from .base import make_prompt, refuse
from .context import StepContext
from .ids import (
    CHOOSE_AGAIN_ANSWER,
    DIRECTIVE,
    DIRECTIVE_PICK,
    LEADER_SESSION,
    LEADER_SESSION_ANSWER,
    REUSE_ANSWER,
    REUSE_PREVIOUS,
    SKIP_ANSWER,
    WRITE_ANSWER,
    count_step,
    is_role_step,
    model_step,
)
from .prompt import Option, Prompt
from .roles import model_instances, team_query
from .state import EXISTING_TASK, AnsweredStep, WizardState

if TYPE_CHECKING:
    from ..documents.inputs import RunInputs
    from ..tasks import TaskEntry

__all__ = [
    "current_task",
    "prefill_from_run",
    "reuse_applies",
    "reuse_blocker",
    "reuse_build",
    "reuse_submit",
]


def current_task(ctx: StepContext, state: WizardState) -> TaskEntry | None:
    """The existing task the setup is for (None for a new task or none chosen)."""
    if state.task_mode != EXISTING_TASK or not state.task_key:
        return None
    from ..tasks import find_task  # a role step needs no task lookup

    return next((t for t in ctx.tasks if t.key == state.task_key), None) or find_task(
        Path(state.project_root), state.task_key
    )


def _bad_inputs(ctx: StepContext, path: Path, field: str, expected: str) -> AnswerRefused:
    return refuse(ctx, "bad_run_inputs", path=str(path), field=field, expected=expected)


def _pairs(ctx: StepContext, path: Path, field: str, raw: Any, *, integer: bool) -> Any:
    """Accept both run-inputs shapes: a map, or prepare's `["role=value", …]` list."""
    if isinstance(raw, list) and all(isinstance(item, str) and "=" in item for item in raw):
        out: dict[str, Any] = {}
        for item in raw:
            role, _, value = item.partition("=")
            role, value = role.strip(), value.strip()
            if integer:
                if not value.isdigit():
                    raise _bad_inputs(ctx, path, field, "role=N entries")
                out[role] = int(value)
            else:
                out.setdefault(role, []).append(value)
        return out
    return raw


def _read_inputs(
    ctx: StepContext, path: Path, inputs: Any
) -> tuple[dict[str, int], dict[str, list[str]], str]:
    """A run-inputs document's role counts, role models and directive, checked."""
    if not isinstance(inputs, dict):
        raise _bad_inputs(ctx, path, "(root)", "a JSON object")
    counts = _pairs(ctx, path, "roleCounts", inputs.get("roleCounts", {}), integer=True)
    models = _pairs(ctx, path, "roleModels", inputs.get("roleModels", {}), integer=False)
    directive = inputs.get("directive", "")
    if not isinstance(counts, dict) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in counts.values()
    ):
        raise _bad_inputs(ctx, path, "roleCounts", "an object mapping roles to integers")
    if not isinstance(models, dict) or not all(
        isinstance(v, list) and all(isinstance(m, str) for m in v) for v in models.values()
    ):
        raise _bad_inputs(ctx, path, "roleModels", "an object mapping roles to model ref arrays")
    if directive is None:
        directive = ""
    if not isinstance(directive, str):
        raise _bad_inputs(ctx, path, "directive", "a string")
    return counts, models, directive


def _reuse_counts(
    profile: Profile,
    state: WizardState,
    counts: dict[str, int],
    record: Callable[[str, str], None],
) -> None:
    """The reused counts that still fit the profile (adjustable roles, then optional)."""
    for wanted in (RoleKind.ADJUSTABLE, RoleKind.OPTIONAL):
        for requirement in profile.static_roles:
            value = counts.get(requirement.role)
            if requirement.kind is not wanted or not isinstance(value, int):
                continue
            if requirement.min <= value <= requirement.max:
                state.role_counts[requirement.role] = value
                record(count_step(requirement.role, wanted is RoleKind.OPTIONAL), str(value))


def _reuse_models(
    profile: Profile,
    state: WizardState,
    models: dict[str, list[str]],
    record: Callable[[str, str], None],
) -> None:
    """The reused models of the roles whose count is settled (fixed or reused).

    A role whose count is still to be asked gets its models asked after it.
    """
    settled = {LEADER} | {
        r.role
        for r in profile.static_roles
        if r.kind is RoleKind.FIXED or r.role in state.role_counts
    }
    for role, ordinal in model_instances(profile, state):
        if role in settled:
            refs = models.get(role, [])
            have = state.role_models.get(role, [])
            # Only a gap-free prefix of each role's models can be kept.
            if ordinal <= len(refs) and len(have) == ordinal - 1:
                state.role_models.setdefault(role, []).append(refs[ordinal - 1])
                record(model_step(role, ordinal), refs[ordinal - 1])


def prefill_from_run(
    ctx: StepContext, state: WizardState, inputs: Any, run: str, path: Path
) -> None:
    """Pre-fill counts, models and directive from a previous run's `run-inputs.json`.

    Each pre-filled value becomes an answered step with provenance `reused:<run>`, so it
    is listed and editable like any answer. Values that no longer fit the profile are
    skipped (those steps are asked); models that no longer fit are rewound, with the
    reason, when the next prompt is computed.
    """
    counts, models, directive = _read_inputs(ctx, path, inputs)
    provenance = f"reused:{run}"
    profile = ctx.profile(state.task_type)
    entries: list[AnsweredStep] = []

    def record(step: str, answer: str) -> None:
        entries.append(AnsweredStep(step=step, answer=answer, provenance=provenance))
        if is_role_step(step):
            state.role_selection_order.append(step)

    state.role_counts.clear()
    state.role_models.clear()
    if state.host_entry_mode == CURRENT_SESSION:
        record(LEADER_SESSION, LEADER_SESSION_ANSWER)
    _reuse_counts(profile, state, counts, record)
    _reuse_models(profile, state, models, record)
    if directive.strip():
        state.directive = directive.strip()
        record(DIRECTIVE_PICK, WRITE_ANSWER)
        record(DIRECTIVE, state.directive)
    else:
        state.directive = ""
        record(DIRECTIVE_PICK, SKIP_ANSWER)
    state.answered.extend(e for e in entries if not state.is_answered(e.step))


def reuse_blocker(
    ctx: StepContext, state: WizardState, inputs: Any, run: str, path: Path
) -> str | None:
    """Why reusing that run's team leads to no complete team (None: it does not).

    The reused counts are what matters: reused models that no longer fit are rewound
    with the reason later, and asked again.
    """
    work = state.copy()
    try:
        prefill_from_run(ctx, work, inputs, run, path)
    except AnswerRefused as exc:
        return exc.message
    work.role_models = {}
    found = blocker(team_query(ctx, work, ctx.profile(work.task_type)).smallest())
    return None if found is None else found.advice


# ---------------------------------------------------------------------------- the step


def reuse_applies(ctx: StepContext, state: WizardState) -> bool:
    task = current_task(ctx, state)
    return (
        task is not None and bool(state.task_type) and task.latest_run(state.task_type) is not None
    )


def _run_inputs() -> type[RunInputs]:
    """The run-inputs document class: loaded only when a run is reused."""
    from ..documents.inputs import RunInputs

    return RunInputs


def _reused(inputs: RunInputs) -> dict[str, Any]:
    """What a reuse takes from a run's inputs: counts, models, directive."""
    return {
        "roleCounts": dict(inputs.role_counts),
        "roleModels": {role: list(refs) for role, refs in inputs.role_models.items()},
        "directive": inputs.directive,
    }


def reuse_build(ctx: StepContext, state: WizardState) -> Prompt:
    task = current_task(ctx, state)
    run = task.latest_run(state.task_type) if task else None
    run_name = run.name if run else ""
    why: str | None = None
    if run is not None:
        try:
            inputs = _run_inputs().read(run.inputs_path)
        except OkstraError as exc:
            why = exc.render()
        else:
            why = reuse_blocker(ctx, state, _reused(inputs), run.name, run.inputs_path)
    options = tuple(
        Option(
            value=v,
            label=ctx.text.get(f"reuse_previous.option.{v}", run=run_name),
            disabled_reason=why if v == REUSE_ANSWER else None,
        )
        for v in (REUSE_ANSWER, CHOOSE_AGAIN_ANSWER)
    )
    return make_prompt(
        ctx,
        state,
        REUSE_PREVIOUS,
        "pick",
        "reuse_previous",
        options=options,
        default=REUSE_ANSWER if why is None else CHOOSE_AGAIN_ANSWER,
        label_values={"run": run_name},
        meta={"run": run_name},
    )


def reuse_submit(ctx: StepContext, state: WizardState, answer: str, _p: Prompt) -> str:
    if answer != REUSE_ANSWER:
        return ""
    task = current_task(ctx, state)
    run = task.latest_run(state.task_type) if task else None
    if run is None:
        raise refuse(ctx, "no_previous_run", task_type=state.task_type)
    try:
        # Through the run-inputs model: this version's file, or the previous layout
        # (inputs nested under `inputs`, counts and models as `role=value` strings).
        inputs = _run_inputs().read(run.inputs_path)
    except OkstraError as exc:
        raise AnswerRefused(exc.render()) from None
    prefill_from_run(ctx, state, _reused(inputs), run.name, run.inputs_path)
    return run.name
