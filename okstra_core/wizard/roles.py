"""The role selection block (SPEC §6.2): leader-session, role-count, role-add, role-model.

Asked after the identity steps, in this order: `leader-session` (current-session mode
only), `role-count:<role>` for every adjustable role, `role-add:<role>` for every
optional role, then `role-model:<role>:<n>` for every role instance (the leader in
spawn-process mode, then each static role with count > 0 in profile order).

Options of a role-model step come from `resolver.model_options`, which is exact:
an option is selectable exactly when a complete valid team extends it. On every prompt
computation the previously chosen models are re-checked; from the first one that is no
longer valid on, they are discarded (and remembered, §6.3) and asked again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import roleargs
from ..catalog.models import LEADER, Profile, RoleKind
from ..errors import AnswerRefused, AssignmentResolutionError, OkstraError
from .context import StepContext
from .prompt import Option, Prompt
from .state import AnsweredStep, WizardState
from .steps import DIRECTIVE, DIRECTIVE_PICK, make_prompt, refuse

LEADER_SESSION = "leader-session"
ROLE_COUNT = "role-count"
ROLE_ADD = "role-add"
ROLE_MODEL = "role-model"
LEADER_DUTY = "lead"


def is_role_step(step_id: str) -> bool:
    return step_id == LEADER_SESSION or step_id.startswith(
        (f"{ROLE_COUNT}:", f"{ROLE_ADD}:", f"{ROLE_MODEL}:")
    )


def count_step(role: str, optional: bool) -> str:
    return f"{ROLE_ADD if optional else ROLE_COUNT}:{role}"


def model_step(role: str, ordinal: int) -> str:
    return f"{ROLE_MODEL}:{role}:{ordinal}"


@dataclass(frozen=True)
class RoleStepId:
    """A parsed role step id."""

    kind: str  # leader-session | role-count | role-add | role-model
    role: str = ""
    ordinal: int = 0


def parse_role_step(step_id: str) -> RoleStepId | None:
    """Parse `role-model:analyser:2` and friends; None for anything else."""
    if step_id == LEADER_SESSION:
        return RoleStepId(LEADER_SESSION)
    kind, _, rest = step_id.partition(":")
    if kind in (ROLE_COUNT, ROLE_ADD) and rest and ":" not in rest:
        return RoleStepId(kind, rest)
    if kind == ROLE_MODEL:
        role, _, ordinal = rest.rpartition(":")
        if role and ordinal.isdigit() and int(ordinal) >= 1:
            return RoleStepId(kind, role, int(ordinal))
    return None


# ---------------------------------------------------------------------------- counts


def role_count(profile: Profile, state: WizardState, role: str) -> int:
    """The count a role has now: fixed, chosen, or 0/recommended when not chosen yet."""
    if role == LEADER:
        return 1
    requirement = profile.role(role)
    if requirement is None or requirement.dynamic:
        return 0
    if requirement.kind is RoleKind.FIXED:
        return requirement.min
    if role in state.role_counts:
        return state.role_counts[role]
    return 0 if requirement.kind is RoleKind.OPTIONAL else requirement.recommended_count


def model_instances(profile: Profile, state: WizardState) -> list[tuple[str, int]]:
    """Role instances that take a model, in block order (leader first in spawn-process)."""
    out: list[tuple[str, int]] = []
    if state.host_entry_mode == "spawn-process":
        out.append((LEADER, 1))
    for requirement in profile.static_roles:
        if requirement.role == LEADER:
            continue
        for ordinal in range(1, role_count(profile, state, requirement.role) + 1):
            out.append((requirement.role, ordinal))
    return out


def _pending_count_step(profile: Profile, state: WizardState) -> tuple[str, bool] | None:
    """The first adjustable, then optional, role without a chosen count."""
    for wanted in (RoleKind.ADJUSTABLE, RoleKind.OPTIONAL):
        for requirement in profile.static_roles:
            if requirement.kind is wanted and requirement.role not in state.role_counts:
                return requirement.role, wanted is RoleKind.OPTIONAL
    return None


# ---------------------------------------------------------------------------- dropping


def drop_role_steps(state: WizardState, step_ids: set[str]) -> None:
    """Remove answered role steps, remembering their answers for the next time (§6.3)."""
    if not step_ids:
        return
    for entry in state.answered:
        if entry.step in step_ids:
            state.remembered_answers[entry.step] = entry.answer
    state.answered = [e for e in state.answered if e.step not in step_ids]
    state.role_selection_order = [s for s in state.role_selection_order if s not in step_ids]


def _drop_models_from(state: WizardState, instances: list[tuple[str, int]], index: int) -> None:
    """Discard the chosen models of `instances[index:]` (and any beyond the counts)."""
    dropped: set[str] = set()
    keep_per_role: dict[str, int] = {}
    for position, (role, ordinal) in enumerate(instances):
        if position < index:
            keep_per_role[role] = ordinal
    for role, models in list(state.role_models.items()):
        keep = keep_per_role.get(role, 0)
        for ordinal in range(keep + 1, len(models) + 1):
            dropped.add(model_step(role, ordinal))
        if keep:
            state.role_models[role] = models[:keep]
        else:
            del state.role_models[role]
    drop_role_steps(state, dropped)


def _trim_to_instances(state: WizardState, instances: list[tuple[str, int]]) -> None:
    """Models of roles no longer in the team, or beyond a role's count, are dropped."""
    counts: dict[str, int] = {}
    for role, ordinal in instances:
        counts[role] = max(counts.get(role, 0), ordinal)
    dropped: set[str] = set()
    for role, models in list(state.role_models.items()):
        keep = counts.get(role, 0)
        if len(models) > keep:
            dropped.update(model_step(role, n) for n in range(keep + 1, len(models) + 1))
            if keep:
                state.role_models[role] = models[:keep]
            else:
                del state.role_models[role]
    drop_role_steps(state, dropped)


def _chosen_prefix(
    state: WizardState, instances: list[tuple[str, int]], upto: int
) -> dict[str, list[str]]:
    prefix: dict[str, list[str]] = {}
    for role, ordinal in instances[:upto]:
        models = state.role_models.get(role, [])
        if ordinal <= len(models):
            prefix.setdefault(role, []).append(models[ordinal - 1])
    return prefix


def _options(
    ctx: StepContext,
    state: WizardState,
    profile: Profile,
    role_models: Mapping[str, list[str]],
    role: str,
    ordinal: int,
) -> list[Any]:
    from ..resolver import model_options

    return model_options(
        profile,
        state.role_counts,
        role_models,
        ctx.scopes,
        ctx.pool,
        ctx.host(state.host_runtime),
        state.host_entry_mode,
        role,
        ordinal,
    )


def _resolve_team(ctx: StepContext, state: WizardState, profile: Profile) -> None:
    """Resolve the team chosen so far; raises what `resolve_assignments` raises."""
    from ..resolver import resolve_assignments

    resolve_assignments(
        profile,
        state.role_counts,
        state.role_models,
        ctx.scopes,
        ctx.pool,
        ctx.host(state.host_runtime),
        state.host_entry_mode,
    )


def discard_invalid_models(ctx: StepContext, state: WizardState, profile: Profile) -> None:
    """Drop previously chosen models from the first no-longer-valid one onward.

    The environment may have changed since they were chosen (a CLI uninstalled, a
    config default changed). Fast path: when the chosen models still resolve to a
    complete team, every prefix is completable and nothing is dropped.
    """
    instances = model_instances(profile, state)
    _trim_to_instances(state, instances)
    if not state.role_models:
        return
    try:
        _resolve_team(ctx, state, profile)
        return
    except AssignmentResolutionError:
        pass
    for index, (role, ordinal) in enumerate(instances):
        chosen = state.role_models.get(role, [])
        if ordinal > len(chosen):
            continue
        prefix = _chosen_prefix(state, instances, index)
        selectable = {
            o.model.ref
            for o in _options(ctx, state, profile, prefix, role, ordinal)
            if o.selectable
        }
        if chosen[ordinal - 1] not in selectable:
            _drop_models_from(state, instances, index)
            return


# ---------------------------------------------------------------------------- prompts


def _role_meta(profile: Profile, role: str, ordinal: int | None = None) -> dict[str, Any]:
    requirement = profile.role(role)
    if role == LEADER or requirement is None:
        meta: dict[str, Any] = {
            "role": role,
            "duty": LEADER_DUTY,
            "min": 1,
            "max": 1,
            "recommended": 1,
            "description": "",
        }
    else:
        meta = {
            "role": role,
            "duty": requirement.duty,
            "min": requirement.min,
            "max": requirement.max,
            "recommended": requirement.recommended_count,
            "description": requirement.description,
        }
    if ordinal is not None:
        meta["ordinal"] = ordinal
    return meta


def reported_host_model(ctx: StepContext) -> str | None:
    """The host session's model ref (`OKSTRA_HOST_MODEL`, see `roleargs.host_context`)."""
    return roleargs.reported_host_model(ctx.environment, ctx.pool)


def reported_host_effort(ctx: StepContext) -> str | None:
    return roleargs.reported_host_effort(ctx.environment)


def current_session_model(ctx: StepContext, state: WizardState) -> str:
    """The model shown for a current-session leader: the one the host reports, else
    "model not reported" (okstra never invents one)."""
    return reported_host_model(ctx) or ctx.text.get("confirmation.model_not_reported")


def _leader_session_prompt(ctx: StepContext, state: WizardState) -> Prompt:
    host = ctx.host(state.host_runtime)
    model = current_session_model(ctx, state)
    effort = reported_host_effort(ctx)
    return make_prompt(
        ctx,
        state,
        LEADER_SESSION,
        "pick",
        "leader_session",
        options=(Option(value="continue", label=ctx.text.get("leader_session.option.continue")),),
        default="continue",
        label_values={
            "model": model,
            "host": host.display_label,
            "effort_suffix": ctx.text.get("leader_session.effort_suffix", effort=effort)
            if effort
            else "",
        },
        meta={"role": LEADER, "duty": LEADER_DUTY, "model": model},
    )


def _count_prompt(ctx: StepContext, state: WizardState, profile: Profile, role: str) -> Prompt:
    requirement = profile.role(role)
    assert requirement is not None
    options = tuple(
        Option(
            value=str(n),
            label=ctx.text.get(
                "role_count.option",
                count=n,
                suffix=ctx.text.get("role_count.recommended_suffix")
                if n == requirement.recommended_count
                else "",
            ),
        )
        for n in range(requirement.min, requirement.max + 1)
    )
    return make_prompt(
        ctx,
        state,
        count_step(role, optional=False),
        "pick",
        "role_count",
        options=options,
        default=str(requirement.recommended_count),
        label_values={
            "role": role,
            "duty": requirement.duty,
            "min": requirement.min,
            "max": requirement.max,
        },
        meta=_role_meta(profile, role),
    )


def _add_prompt(ctx: StepContext, state: WizardState, profile: Profile, role: str) -> Prompt:
    requirement = profile.role(role)
    assert requirement is not None
    options = [Option(value="0", label=ctx.text.get("role_add.option.skip"))]
    options += [
        Option(value=str(n), label=ctx.text.get("role_add.option.add", count=n, role=role))
        for n in range(1, requirement.max + 1)
    ]
    return make_prompt(
        ctx,
        state,
        count_step(role, optional=True),
        "pick",
        "role_add",
        options=tuple(options),
        default="0",
        label_values={"role": role, "duty": requirement.duty, "max": requirement.max},
        meta=_role_meta(profile, role),
    )


def model_prompt(
    ctx: StepContext, state: WizardState, profile: Profile, role: str, ordinal: int
) -> Prompt:
    """The `role-model:<role>:<ordinal>` prompt, options from the exact resolver."""
    prefix = {r: list(m) for r, m in state.role_models.items()}
    states = _options(ctx, state, profile, prefix, role, ordinal)
    options: list[Option] = []
    for item in states:
        model = item.model
        provenance = item.provenance or ""
        suffix = (
            ctx.text.get("role_model.default_suffix", provenance=provenance)
            if provenance.startswith("default:")
            else ""
        )
        meta = {"display": model.display, "provider": model.provider_id}
        if provenance:
            meta["provenance"] = provenance
        options.append(
            Option(
                value=model.ref,
                label=ctx.text.get(
                    "role_model.option",
                    model_ref=model.ref,
                    display=model.display,
                    provider=model.provider_id,
                    suffix=suffix,
                ),
                disabled_reason=item.disabled_reason,
                meta=meta,
            )
        )
    first = next((o.value for o in options if o.selectable), None)
    count = role_count(profile, state, role)
    requirement = profile.role(role)
    duty = requirement.duty if requirement is not None else LEADER_DUTY
    prompt = make_prompt(
        ctx,
        state,
        model_step(role, ordinal),
        "pick",
        "role_model",
        options=tuple(options),
        default=first,
        label_values={"role": role, "ordinal": ordinal, "count": count, "duty": duty},
        meta=_role_meta(profile, role, ordinal),
    )
    if first is None:
        # Nothing can run this instance: say so on the prompt; any answer is refused.
        help_text = ctx.text.get("role_model.none_selectable", role=role, ordinal=ordinal)
        prompt = prompt.model_copy(update={"help": help_text})
    return prompt


def next_role_prompt(ctx: StepContext, state: WizardState) -> Prompt | None:
    """The next question of the role block, or None when the block is complete.

    May change `state` (a working copy): invalid previously chosen models are dropped.
    """
    profile = ctx.profile(state.task_type)
    if state.host_entry_mode == "current-session" and not state.is_answered(LEADER_SESSION):
        return _leader_session_prompt(ctx, state)
    pending = _pending_count_step(profile, state)
    if pending is not None:
        role, optional = pending
        return (_add_prompt if optional else _count_prompt)(ctx, state, profile, role)
    discard_invalid_models(ctx, state, profile)
    for role, ordinal in model_instances(profile, state):
        if ordinal > len(state.role_models.get(role, [])):
            return model_prompt(ctx, state, profile, role, ordinal)
    return None


# ---------------------------------------------------------------------------- submit


def submit_role(ctx: StepContext, state: WizardState, prompt: Prompt, answer: str) -> str:
    """Apply an answer to a role prompt (already checked to be a selectable option)."""
    parsed = parse_role_step(prompt.id)
    assert parsed is not None
    if parsed.kind == LEADER_SESSION:
        return current_session_model(ctx, state)
    if parsed.kind in (ROLE_COUNT, ROLE_ADD):
        state.role_counts[parsed.role] = int(answer)
        # A new count invalidates that role's models: they are asked again.
        dropped = {
            model_step(parsed.role, n)
            for n in range(1, len(state.role_models.get(parsed.role, [])) + 1)
        }
        state.role_models.pop(parsed.role, None)
        drop_role_steps(state, dropped)
        return answer
    chosen = state.role_models.setdefault(parsed.role, [])
    if parsed.ordinal != len(chosen) + 1:
        raise refuse(
            ctx,
            "model_out_of_order",
            role=parsed.role,
            ordinal=parsed.ordinal,
            expected=len(chosen) + 1,
        )
    chosen.append(answer)
    return answer


def out_of_order(ctx: StepContext, state: WizardState, step_id: str) -> AnswerRefused | None:
    """A specific refusal for a role-model answer given for the wrong ordinal."""
    parsed = parse_role_step(step_id)
    if parsed is None or parsed.kind != ROLE_MODEL:
        return None
    expected = len(state.role_models.get(parsed.role, [])) + 1
    if parsed.ordinal != expected:
        return refuse(
            ctx, "model_out_of_order", role=parsed.role, ordinal=parsed.ordinal, expected=expected
        )
    return None


def check_complete_team(ctx: StepContext, state: WizardState) -> None:
    """Refuse confirmation unless the chosen team resolves (names every problem)."""
    profile = ctx.profile(state.task_type)
    try:
        _resolve_team(ctx, state, profile)
    except OkstraError as exc:
        raise AnswerRefused(exc.render()) from None


# ---------------------------------------------------------------------------- reuse


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


def prefill_from_run(
    ctx: StepContext, state: WizardState, inputs: Any, run: str, path: Path
) -> None:
    """Pre-fill counts, models and directive from a previous run's `run-inputs.json`.

    Each pre-filled value becomes an answered step with provenance `reused:<run>`, so it
    is listed and editable like any answer. Values that no longer fit the profile are
    skipped (those steps are asked); models that are no longer valid are dropped by the
    next prompt computation.
    """
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

    provenance = f"reused:{run}"
    profile = ctx.profile(state.task_type)
    entries: list[AnsweredStep] = []

    def record(step: str, answer: str) -> None:
        entries.append(AnsweredStep(step=step, answer=answer, provenance=provenance))
        if is_role_step(step):
            state.role_selection_order.append(step)

    state.role_counts.clear()
    state.role_models.clear()
    if state.host_entry_mode == "current-session":
        record(LEADER_SESSION, "continue")
    for wanted in (RoleKind.ADJUSTABLE, RoleKind.OPTIONAL):
        for requirement in profile.static_roles:
            value = counts.get(requirement.role)
            if requirement.kind is not wanted or not isinstance(value, int):
                continue
            if requirement.min <= value <= requirement.max:
                state.role_counts[requirement.role] = value
                record(count_step(requirement.role, wanted is RoleKind.OPTIONAL), str(value))
    # Models are taken for roles whose count is settled (fixed or reused); a role
    # whose count is still to be asked gets its models asked after it.
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
    if directive.strip():
        state.directive = directive.strip()
        record(DIRECTIVE_PICK, "write")
        record(DIRECTIVE, state.directive)
    else:
        state.directive = ""
        record(DIRECTIVE_PICK, "skip")
    state.answered.extend(e for e in entries if not state.is_answered(e.step))
