"""The role steps, generated from the profile: leader-session, role-count, role-add, role-model.

In this order: `leader-session` (current-session mode only), `role-count:<role>` per
adjustable role, `role-add:<role>` per optional role, then `role-model:<role>:<n>` per
role instance (the leader in spawn-process mode first). Every option is exact: it is
selectable only when a complete valid team still exists after it; the others are
listed disabled, with the reason. An infeasible recommended count falls back to the
nearest feasible one, with a note.
"""

from __future__ import annotations

import functools
import operator
from typing import cast

from ..binding import choose_runner
from ..catalog.models import LEADER, Profile, RoleKind
from ..defaults import Pick, fallback_note
from ..errors import AnswerRefused, OkstraError
from ..pool import PoolModel, reported_host_effort, reported_host_model
from ..resolver import (
    Blocker,
    TeamQuery,
    blocker,
    count_options,
    model_option_rows,
    resolve,
    unavailable_defaults,
)
from ..vocabulary import CLI_WRAPPER, CURRENT_SESSION, SPAWN_PROCESS
from . import ids
from .base import (
    Build,
    Reset,
    Step,
    StepContext,
    Submit,
    always,
    make_prompt,
    no_reset,
    refuse,
    with_notes,
)
from .ids import StepKind
from .prompt import Option, Prompt, PromptMeta
from .state import WizardState

LEADER_DUTY = "lead"


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
        # A count outside the profile's range (a profile edited, a file tampered with)
        # is re-asked; until then it never sizes anything beyond the range.
        return min(max(state.role_counts[role], requirement.min), requirement.max)
    return 0 if requirement.kind is RoleKind.OPTIONAL else requirement.recommended_count


def model_instances(profile: Profile, state: WizardState) -> list[tuple[str, int]]:
    """Role instances that take a model, in block order (leader first in spawn-process)."""
    out: list[tuple[str, int]] = []
    if state.host_entry_mode == SPAWN_PROCESS:
        out.append((LEADER, 1))
    for requirement in profile.static_roles:
        if requirement.role == LEADER:
            continue
        for ordinal in range(1, role_count(profile, state, requirement.role) + 1):
            out.append((requirement.role, ordinal))
    return out


def team_query(ctx: StepContext, state: WizardState, profile: Profile) -> TeamQuery:
    """The resolver's question for the answers so far."""
    return TeamQuery(
        profile=profile,
        counts=dict(state.role_counts),
        scopes=ctx.scopes,
        pool=ctx.pool,
        host=ctx.host(state.host_runtime),
        entry_mode=state.host_entry_mode,
        models={r: list(m) for r, m in state.role_models.items()},
        current_session_model=current_session_model(ctx, state),
    )


def profile_blockers(ctx: StepContext, state: WizardState) -> dict[str, Blocker | None]:
    """For every task type: why no team of it can be formed here (None: one can);
    computed once per step (the pool's memo)."""

    def build() -> dict[str, Blocker | None]:
        out: dict[str, Blocker | None] = {}
        mode = state.host_entry_mode
        for task_type, profile in ctx.catalog.profiles.items():
            query = TeamQuery(profile, {}, ctx.scopes, ctx.pool, ctx.host(state.host_runtime), mode)
            out[task_type] = blocker(query.smallest())
        return out

    return ctx.pool.memo(
        ("wizard-profile-blockers", state.host_runtime, state.host_entry_mode), build
    )


def team_blocker(ctx: StepContext, state: WizardState) -> Blocker | None:
    """Why no complete team can be formed from the answers so far (None: one can):
    before the task type is chosen, for no task type; after, from the chosen counts
    (open ones at their minimum) and models."""
    if not state.task_type:
        found = profile_blockers(ctx, state)
        if found and all(b is not None for b in found.values()):
            lines = tuple(line for b in found.values() if b is not None for line in b.lines)
            first = next(b for b in found.values() if b is not None)
            return Blocker(lines, first.advice)
        return None
    key = (
        "wizard-team-blocker",
        state.task_type,
        state.host_runtime,
        state.host_entry_mode,
        tuple(sorted(state.role_counts.items())),
        tuple(sorted((r, tuple(m)) for r, m in state.role_models.items())),
    )

    def build() -> Blocker | None:
        profile = ctx.profile(state.task_type)
        return blocker(team_query(ctx, state, profile).smallest())

    # Asked by the re-validation and by the prompt of one step: decided once per pool.
    return ctx.pool.memo(key, build)


def _role_meta(profile: Profile, role: str, ordinal: int | None = None) -> PromptMeta:
    found = None if role == LEADER else profile.role(role)
    meta: PromptMeta = {
        "role": role,
        "duty": found.duty if found is not None else LEADER_DUTY,
        "min": found.min if found is not None else 1,
        "max": found.max if found is not None else 1,
        "recommended": found.recommended_count if found is not None else 1,
        "description": found.description if found is not None else "",
    }
    if ordinal is not None:
        meta["ordinal"] = ordinal
    return meta


def current_session_model(ctx: StepContext, state: WizardState) -> str:
    """The model shown for a current-session leader: the one the host reports, else
    "model not reported" (okstra never invents one)."""
    model = reported_host_model(ctx.environment, ctx.pool)
    return model or ctx.text.get("confirmation.model_not_reported")


def _leader_prompt(ctx: StepContext, state: WizardState) -> Prompt:
    host = ctx.host(state.host_runtime)
    model = current_session_model(ctx, state)
    effort = reported_host_effort(ctx.environment)
    suffix = ctx.text.get("leader_session.effort_suffix", effort=effort) if effort else ""
    answer = ids.LEADER_SESSION_ANSWER
    option = Option(value=answer, label=ctx.text.get(f"leader_session.option.{answer}"))
    return make_prompt(
        ctx,
        state,
        ids.LEADER_SESSION,
        "pick",
        ids.LEADER_SESSION_KIND,
        options=(option,),
        default=answer,
        label_values={"model": model, "host": host.display_label, "effort_suffix": suffix},
        meta={"role": LEADER, "duty": LEADER_DUTY, "model": model},
    )


def _nearest(feasible: list[int], wanted: int) -> int | None:
    """The feasible count nearest to `wanted` (the larger one on a tie)."""
    if not feasible:
        return None
    return min(feasible, key=lambda n: (abs(n - wanted), -n))


def _count_prompt(ctx: StepContext, state: WizardState, *, role: str, optional: bool) -> Prompt:
    profile = ctx.profile(state.task_type)
    requirement = profile.role(role)
    assert requirement is not None
    verdicts = dict(count_options(team_query(ctx, state, profile), role))
    feasible = [n for n, why in verdicts.items() if why is None]
    recommended = 0 if optional else requirement.recommended_count
    default = (
        recommended if verdicts.get(recommended, "") is None else _nearest(feasible, recommended)
    )
    notes: list[str] = []
    meta = _role_meta(profile, role)
    if default is not None and default != recommended:
        reason = verdicts[recommended] or ""
        key = "role_count.recommended_infeasible"
        notes.append(ctx.text.get(key, recommended=recommended, count=default, reason=reason))
        meta["feasibleRecommended"] = default
    options: list[Option] = []
    for n, why in verdicts.items():
        if optional and n == 0:
            label = ctx.text.get("role_add.option.skip")
        elif optional:
            label = ctx.text.get("role_add.option.add", count=n, role=role)
        else:
            suffix = ctx.text.get("role_count.recommended_suffix") if n == recommended else ""
            label = ctx.text.get("role_count.option", count=n, suffix=suffix)
        options.append(Option(value=str(n), label=label, disabled_reason=why))
    values: dict[str, object] = {"role": role, "duty": requirement.duty, "max": requirement.max}
    if not optional:
        values["min"] = requirement.min
    prompt = make_prompt(
        ctx,
        state,
        ids.count_step(role, optional),
        "pick",
        ids.ROLE_ADD_KIND if optional else ids.ROLE_COUNT_KIND,
        options=tuple(options),
        default=None if default is None else str(default),
        label_values=values,
        meta=meta,
    )
    return with_notes(prompt, notes)


def _model_prompt(ctx: StepContext, state: WizardState, *, role: str, ordinal: int) -> Prompt:
    """The `role-model:<role>:<ordinal>` prompt, options from the exact resolver."""
    profile = ctx.profile(state.task_type)
    query = team_query(ctx, state, profile)
    rows = model_option_rows(query, role, ordinal)
    options: list[Option] = []
    defaults = rows.defaults
    for model, reason, provenance in zip(
        rows.models[:defaults], rows.reasons[:defaults], rows.provenances[:defaults], strict=True
    ):
        meta = {"display": model.display, "provider": model.provider_id}
        if provenance:
            meta["provenance"] = provenance
        label = _option_label(ctx, model, provenance or "")
        options.append(Option.trusted(model.ref, label, reason, meta))
    # The pool's models: their options by (ref, reason), looked up without a Python
    # step per option; only the ones not made yet are made.
    known = _pool_options(ctx)
    found = list(map(known.get, zip(rows.refs[defaults:], rows.reasons[defaults:], strict=True)))
    if any(map(_is_none, found)):
        for i, option in enumerate(found):
            if option is None:
                row = defaults + i
                found[i] = _pool_option(ctx, known, rows.models[row], rows.reasons[row])
    options.extend(cast("list[Option]", found))
    # Selectable first (the defaults among them, in order), then the unavailable ones,
    # each provider's together: a person sees what they can pick before what they cannot.
    unavailable = [o for o in options if o.disabled_reason is not None]
    if unavailable:
        rank = {p.id: i for i, p in enumerate(ctx.pool.providers)}
        unavailable.sort(key=lambda o: rank.get(o.value.partition("/")[0], len(rank)))
        options = [o for o in options if o.disabled_reason is None] + unavailable
    first = next((o.value for o in options if o.disabled_reason is None), None)
    count = role_count(profile, state, role)
    requirement = profile.role(role)
    duty = requirement.duty if requirement is not None else LEADER_DUTY
    prompt = make_prompt(
        ctx,
        state,
        ids.model_step(role, ordinal),
        "pick",
        ids.ROLE_MODEL_KIND,
        options=tuple(options),
        default=first,
        label_values={"role": role, "ordinal": ordinal, "count": count, "duty": duty},
        meta=_role_meta(profile, role, ordinal),
    )
    # A configured default that cannot run here is said at the step it affects.
    problem = unavailable_defaults(query, role) if ordinal == 1 else None
    notes = [problem] if problem else []
    # The default's CLI, when okstra cannot tell whether it is logged in: said here,
    # as every command says it (`Readiness.login_note`); it stays the default.
    provider_id = first.partition("/")[0] if first is not None else ""
    if first is not None and (
        choose_runner(role, provider_id, query.host, query.entry_mode) == CLI_WRAPPER
    ):
        notes.extend(query.pool.login_notes([provider_id]))
    # A report writer claude cannot run here: said where the default rules picked another.
    provenance = next((o.meta.get("provenance") for o in options if o.value == first), None)
    if first is not None and isinstance(provenance, str):
        pick = Pick(role, ordinal, first, provenance)
        note = fallback_note(pick, query.pool, query.host, query.entry_mode)
        notes.extend([note] if note else [])
    return with_notes(prompt, notes)


def _option_label(ctx: StepContext, model: PoolModel, provenance: str) -> str:
    suffix = (
        ctx.text.get("role_model.default_suffix", provenance=provenance)
        if provenance.startswith("default:")
        else ""
    )
    return ctx.text.get(
        "role_model.option",
        model_ref=model.ref,
        display=model.display,
        provider=model.provider_id,
        suffix=suffix,
    )


# The (frozen) options of pool models follow from the template, the model and the
# reason: made once per template and provider registry (shared by the pools on the
# same specs), and started again past `_OPTIONS_PER_MODEL` options per pool model.
_OPTIONS_PER_MODEL = 4
_is_none = functools.partial(operator.is_, None)
_PoolOptions = dict[tuple[str, str | None], Option]


def _pool_options(ctx: StepContext) -> _PoolOptions:
    template = ctx.text.raw("role_model.option")
    found: _PoolOptions = ctx.pool.shared_memo(("wizard-role-model-options", template), dict)
    if len(found) > _OPTIONS_PER_MODEL * len(ctx.pool.models()):
        found.clear()
    return found


def _pool_option(
    ctx: StepContext, known: _PoolOptions, model: PoolModel, reason: str | None
) -> Option:
    plain = known.get((model.ref, None))
    label = plain.label if plain is not None else _option_label(ctx, model, "")
    meta = {"display": model.display, "provider": model.provider_id}
    option = known[(model.ref, reason)] = Option.trusted(model.ref, label, reason, meta)
    return option


def _submit_leader(ctx: StepContext, state: WizardState, _answer: str, _p: Prompt) -> str:
    return current_session_model(ctx, state)


def _submit_count(
    _ctx: StepContext, state: WizardState, answer: str, _p: Prompt, *, role: str
) -> str:
    state.role_counts[role] = int(answer)
    # A new count invalidates that role's models: they are asked again.
    drop_role_steps(
        state, {ids.model_step(role, n) for n in range(1, len(state.role_models.get(role, [])) + 1)}
    )
    state.role_models.pop(role, None)
    return answer


def _reset_count(state: WizardState, *, role: str) -> None:
    state.role_counts.pop(role, None)


def _submit_model(
    ctx: StepContext, state: WizardState, answer: str, _p: Prompt, *, role: str, ordinal: int
) -> str:
    problem = out_of_order(ctx, state, ids.model_step(role, ordinal))
    if problem is not None:
        raise problem
    state.role_models.setdefault(role, []).append(answer)
    return answer


def _reset_model(state: WizardState, *, role: str, ordinal: int) -> None:
    models = state.role_models.get(role, [])[: ordinal - 1]
    if models:
        state.role_models[role] = models
    else:
        state.role_models.pop(role, None)


def out_of_order(ctx: StepContext, state: WizardState, step_id: str) -> AnswerRefused | None:
    """A specific refusal for a role-model answer given for the wrong ordinal."""
    parsed = ids.parse_role_step(step_id)
    if parsed is None or parsed.kind != ids.ROLE_MODEL:
        return None
    expected = len(state.role_models.get(parsed.role, [])) + 1
    if parsed.ordinal != expected:
        return refuse(
            ctx, "model_out_of_order", role=parsed.role, ordinal=parsed.ordinal, expected=expected
        )
    return None


def role_steps(ctx: StepContext, state: WizardState) -> list[Step]:
    """The role steps of the chosen task type, in order (none before it is chosen);
    model steps follow the chosen counts, else the recommended ones (an estimate)."""
    if not state.task_type:
        return []
    try:
        profile = ctx.profile(state.task_type)
    except OkstraError:
        return []
    out: list[Step] = []

    def add(step_id: str, kind: StepKind, build: Build, submit: Submit, reset: Reset) -> None:
        out.append(Step(step_id, kind, always, build, submit, reset, role_block=True))

    if state.host_entry_mode == CURRENT_SESSION:
        add(ids.LEADER_SESSION, ids.LEADER_SESSION_KIND, _leader_prompt, _submit_leader, no_reset)
    for wanted in (RoleKind.ADJUSTABLE, RoleKind.OPTIONAL):
        optional = wanted is RoleKind.OPTIONAL
        kind = ids.ROLE_ADD_KIND if optional else ids.ROLE_COUNT_KIND
        for role in (r.role for r in profile.static_roles if r.kind is wanted):
            add(
                ids.count_step(role, optional),
                kind,
                functools.partial(_count_prompt, role=role, optional=optional),
                functools.partial(_submit_count, role=role),
                functools.partial(_reset_count, role=role),
            )
    for role, ordinal in model_instances(profile, state):
        add(
            ids.model_step(role, ordinal),
            ids.ROLE_MODEL_KIND,
            functools.partial(_model_prompt, role=role, ordinal=ordinal),
            functools.partial(_submit_model, role=role, ordinal=ordinal),
            functools.partial(_reset_model, role=role, ordinal=ordinal),
        )
    return out


def drop_role_steps(state: WizardState, step_ids: set[str]) -> None:
    """Remove answered role steps, remembering their answers for the next time."""
    if not step_ids:
        return
    for entry in state.answered:
        if entry.step in step_ids:
            state.remembered_answers[entry.step] = entry.answer
    state.answered = [e for e in state.answered if e.step not in step_ids]
    state.role_selection_order = [s for s in state.role_selection_order if s not in step_ids]


def check_complete_team(ctx: StepContext, state: WizardState) -> None:
    """Refuse confirmation unless the chosen team resolves (names every problem)."""
    try:
        resolve(team_query(ctx, state, ctx.profile(state.task_type)))
    except OkstraError as exc:
        raise AnswerRefused(exc.render()) from None
