"""The wizard's steps in order, the one rule for rewinding them, and re-validation.

`steps(ctx, state)`: the static steps up to `reuse_previous`, the role steps of the
chosen task type's profile, then the static steps from `directive_pick`; everything the
engine does walks this one list. Rewinding to a step undoes it and every later step
(their `reset`), drops their answers (remembered, offered as defaults when asked
again) and keeps the earlier ones; rewinding a role step keeps the answers after the
role block (directive, related tasks) and returns to the confirmation, as the earlier
okstra did. Before every prompt, the first answer that no longer holds is rewound,
with a `StaleNote` saying why for the next prompt to show (`revalidate`).
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import OkstraError
from ..resolver import check_counts
from . import ids
from .base import Step, StepContext
from .roles import role_steps, team_blocker
from .state import StaleNote, WizardState
from .steps import EARLY_STEPS, LATE_STEPS


def steps(ctx: StepContext, state: WizardState) -> list[Step]:
    """Every step of the wizard for the answers so far, in order."""
    return [*EARLY_STEPS, *role_steps(ctx, state), *LATE_STEPS]


def index_of(asked: list[Step], step_id: str) -> int | None:
    return next((i for i, step in enumerate(asked) if step.id == step_id), None)


def rewind(ctx: StepContext, state: WizardState, step_id: str) -> None:
    """Rewind to `step_id`: undo it and every later step; keep every earlier one.

    A step answered but no longer in the list (its role left the profile, its ordinal
    is beyond a lowered count) rewinds from the first role step.
    """
    asked = steps(ctx, state)
    index = index_of(asked, step_id)
    if index is None:
        index = next((i for i, s in enumerate(asked) if s.role_block), len(EARLY_STEPS))
    kept = {s.id for s in asked[:index]}
    undone = asked[index:]
    if index < len(asked) and asked[index].role_block:
        # A role rewind keeps the directive and related tasks: back to confirm after.
        late = {s.id for s in LATE_STEPS if s.id not in (ids.CONFIRM, ids.EDIT_TARGET)}
        kept |= late
        undone = [s for s in undone if s.id not in late]
    for step in undone:
        step.reset(state)
    for entry in state.answered:
        if entry.step not in kept and entry.step not in ids.NOT_REMEMBERED:
            state.remembered_answers[entry.step] = entry.answer
    _keep_only(state, kept.__contains__)
    _keep_answered_roles(state)


def _keep_only(state: WizardState, keep: Callable[[str], bool]) -> None:
    """Drop the answered steps (and their role selection order) `keep` says no to."""
    state.answered = [e for e in state.answered if keep(e.step)]
    state.role_selection_order = [s for s in state.role_selection_order if keep(s)]


def _keep_answered_roles(state: WizardState) -> None:
    """Counts and models only for the role steps still answered (a gap-free prefix)."""
    answered = {e.step for e in state.answered if ids.is_role_step(e.step)}
    state.role_counts = {
        role: n
        for role, n in state.role_counts.items()
        if f"role-count:{role}" in answered or f"role-add:{role}" in answered
    }
    models: dict[str, list[str]] = {}
    for role, refs in state.role_models.items():
        kept: list[str] = []
        for ordinal, ref in enumerate(refs, start=1):
            if f"{ids.ROLE_MODEL}:{role}:{ordinal}" not in answered:
                break
            kept.append(ref)
        if kept:
            models[role] = kept
    state.role_models = models
    # A model step whose model was cut above is no longer answered either.
    stray = {
        e.step
        for e in state.answered
        if (parsed := ids.parse_role_step(e.step)) is not None
        and parsed.kind == ids.ROLE_MODEL
        and parsed.ordinal > len(models.get(parsed.role, []))
    }
    if stray:
        _keep_only(state, lambda step: step not in stray)


def back_target(ctx: StepContext, state: WizardState, current: str) -> str | None:
    """The step "back" rewinds from prompt `current`: the last step answered before it.

    Steps pre-filled by reusing a run are part of that one answer (`reuse_previous`);
    answers of steps after the current one (a directive kept while a stale model is
    asked again) are not "before" it.
    """
    asked = steps(ctx, state)
    limit = index_of(asked, current)
    for entry in reversed(state.answered):
        if entry.provenance.startswith("reused:"):
            continue
        position = index_of(asked, entry.step)
        if limit is None or position is None or position < limit:
            return entry.step
    return None


def _team_holds(ctx: StepContext, state: WizardState) -> bool:
    """Fast path, exact: every task type and role answer still holds while the answers
    so far can still be completed (each was selectable when a complete team extended them)."""
    if not state.task_type:
        return True
    try:
        profile = ctx.profile(state.task_type)
        check_counts(profile, state.role_counts)
        asked = {s.id for s in steps(ctx, state)}
        if any(ids.is_role_step(e.step) and e.step not in asked for e in state.answered):
            return False
        ctx.host(state.host_runtime)
        return team_blocker(ctx, state) is None
    except OkstraError:
        return False


def revalidate(ctx: StepContext, state: WizardState) -> StaleNote | None:
    """Rewind the first answer that no longer holds, recording why (`state.stale`).

    The setup may have changed since (a CLI uninstalled, a role removed, a maximum
    lowered): the task type and role steps are checked in order against their prompts
    rebuilt from the answers before them. A wizard with no complete team for any
    answer keeps its answers and its prompt says why (`blocked`).
    """
    if _team_holds(ctx, state):
        return None
    if state.task_type:
        try:
            ctx.profile(state.task_type)
        except OkstraError as exc:  # its profile file is gone
            return _rewound(ctx, state, ids.TASK_TYPE, state.task_type, exc.message)
    asked = steps(ctx, state)
    note = _left_profile(ctx, state, {s.id for s in asked})
    if note is not None:
        return note
    decided, note = _first_stale_step(ctx, state, asked)
    if decided:
        return note
    return _stray_counts(ctx, state, asked)


def _left_profile(ctx: StepContext, state: WizardState, known: set[str]) -> StaleNote | None:
    """Rewind the first answered role step the profile no longer asks (None: none); a
    role that left the profile is named (a lowered count is caught at its count step)."""
    for gone in state.answered:
        parsed = ids.parse_role_step(gone.step)
        if parsed is None or gone.step in known:
            continue
        removed = _removed(ctx, state, parsed.role)
        if removed is not None:
            return _rewound(ctx, state, gone.step, gone.answer, removed)
        if parsed.kind != ids.ROLE_MODEL:  # the role's count is no longer asked this way
            reason = ctx.text.get("stale.not_asked", step=gone.step, task_type=state.task_type)
            return _rewound(ctx, state, gone.step, gone.answer, reason)
    return None


def _first_stale_step(
    ctx: StepContext, state: WizardState, asked: list[Step]
) -> tuple[bool, StaleNote | None]:
    """Check the task type and role answers in order against their rebuilt prompts:
    (True, note) one was rewound, (True, None) none can hold (kept), (False, None) all hold."""
    for step in asked:
        if step.id != ids.TASK_TYPE and not step.role_block:
            continue
        entry = state.entry(step.id)
        if entry is None:
            continue
        answer = _held(state, step.id, entry.answer)
        before = state.copy()
        rewind(ctx, before, step.id)
        before.stale = None
        try:
            prompt = step.build(ctx, before)
        except OkstraError as exc:
            return True, _rewound(ctx, state, step.id, answer, exc.message)
        option = prompt.option(answer)
        if option is None:
            reason = ctx.text.get("stale.not_an_option", answer=answer)
            return True, _rewound(ctx, state, step.id, answer, reason)
        if option.disabled_reason is not None:
            if team_blocker(ctx, before) is not None:
                # No answer here can hold: keep the answers, and have the prompt say
                # why (a confirmed wizard is confirmed no longer).
                if state.confirmed is True:
                    rewind(ctx, state, ids.CONFIRM)
                return True, None
            return True, _rewound(ctx, state, step.id, answer, option.disabled_reason)
    return False, None


def _held(state: WizardState, step_id: str, answer: str) -> str:
    """The value a role step's answer stands for in the state (what the team uses)."""
    parsed = ids.parse_role_step(step_id)
    if parsed is None or parsed.kind == ids.LEADER_SESSION:
        return answer
    if parsed.kind == ids.ROLE_MODEL:
        models = state.role_models.get(parsed.role, [])
        return models[parsed.ordinal - 1] if parsed.ordinal <= len(models) else answer
    count = state.role_counts.get(parsed.role)
    return answer if count is None else str(count)


def _stray_counts(ctx: StepContext, state: WizardState, asked: list[Step]) -> StaleNote | None:
    """Counts or models no answer explains (a hand-edited file): the role steps are
    rewound, naming what is wrong."""
    try:
        check_counts(ctx.profile(state.task_type), state.role_counts)
        team_blocker(ctx, state)
    except OkstraError as exc:
        first = next((s.id for s in asked if s.role_block), None)
        if first is not None:
            return _rewound(ctx, state, first, "", exc.message)
    return None


def _removed(ctx: StepContext, state: WizardState, role: str) -> str | None:
    """Why `role` is no longer in the profile (None: it is)."""
    try:
        profile = ctx.profile(state.task_type)
    except OkstraError as exc:
        return exc.message
    if role != "leader" and profile.role(role) is None:
        return ctx.text.get("stale.role_removed", role=role, task_type=state.task_type)
    return None


def _rewound(
    ctx: StepContext, state: WizardState, step_id: str, answer: str, reason: str
) -> StaleNote:
    rewind(ctx, state, step_id)
    note = StaleNote(step=step_id, answer=answer, reason=reason)
    state.stale = note
    state.confirmed = None
    return note
