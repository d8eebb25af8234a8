"""The wizard's steps in order, and the one rule for rewinding them.

`steps(ctx, state)` is the whole wizard for the answers so far: the static steps up to
`reuse_previous`, the role steps generated from the chosen task type's profile, then
the static steps from `directive_pick` to `edit_target`. Everything the engine does —
the next prompt, a submit, a rewind, back, progress, re-validation on load — walks
this one list.

Rewinding to a step undoes it and every step after it in this order (their `reset`),
drops their answers (remembered, and offered as defaults when asked again) and keeps
everything before it — except that rewinding a role step keeps the answers after the
role block (directive, related tasks): the team is chosen again and the wizard returns
to the confirmation, as the earlier okstra did.
"""

from __future__ import annotations

from .base import Step
from .context import StepContext
from .ids import CONFIRM, EDIT_TARGET, NOT_REMEMBERED, ROLE_MODEL, is_role_step, parse_role_step
from .roles import role_steps
from .state import WizardState
from .steps import EARLY_STEPS, LATE_STEPS


def steps(ctx: StepContext, state: WizardState) -> list[Step]:
    """Every step of the wizard for the answers so far, in order."""
    return [*EARLY_STEPS, *role_steps(ctx, state), *LATE_STEPS]


def index_of(asked: list[Step], step_id: str) -> int | None:
    for index, step in enumerate(asked):
        if step.id == step_id:
            return index
    return None


def rewind(ctx: StepContext, state: WizardState, step_id: str) -> None:
    """Rewind to `step_id`: undo it and every later step; keep every earlier one.

    A role step keeps the steps after the role block but the confirmation (directive,
    related tasks). A step that is answered but no longer in the list (its role left
    the profile, its ordinal is beyond a lowered count) rewinds from the first role step.
    """
    asked = steps(ctx, state)
    index = index_of(asked, step_id)
    if index is None:
        index = next((i for i, s in enumerate(asked) if s.role_block), len(EARLY_STEPS))
    kept = {s.id for s in asked[:index]}
    undone = asked[index:]
    if index < len(asked) and asked[index].role_block:
        # A role rewind keeps the directive and related tasks: back to confirm after.
        late = {s.id for s in LATE_STEPS if s.id not in (CONFIRM, EDIT_TARGET)}
        kept |= late
        undone = [s for s in undone if s.id not in late]
    for step in undone:
        step.reset(state)
    dropped = [e for e in state.answered if e.step not in kept]
    for entry in dropped:
        if entry.step not in NOT_REMEMBERED:
            state.remembered_answers[entry.step] = entry.answer
    state.answered = [e for e in state.answered if e.step in kept]
    state.role_selection_order = [s for s in state.role_selection_order if s in kept]
    _keep_answered_roles(state)


def _keep_answered_roles(state: WizardState) -> None:
    """Counts and models only for the role steps still answered (a gap-free prefix)."""
    answered = {e.step for e in state.answered if is_role_step(e.step)}
    state.role_counts = {
        role: n
        for role, n in state.role_counts.items()
        if f"role-count:{role}" in answered or f"role-add:{role}" in answered
    }
    models: dict[str, list[str]] = {}
    for role, refs in state.role_models.items():
        kept: list[str] = []
        for ordinal, ref in enumerate(refs, start=1):
            if f"{ROLE_MODEL}:{role}:{ordinal}" not in answered:
                break
            kept.append(ref)
        if kept:
            models[role] = kept
    state.role_models = models
    # A model step whose model was cut above is no longer answered either.
    stray = {
        e.step
        for e in state.answered
        if (parsed := parse_role_step(e.step)) is not None
        and parsed.kind == ROLE_MODEL
        and parsed.ordinal > len(models.get(parsed.role, []))
    }
    if stray:
        state.answered = [e for e in state.answered if e.step not in stray]
        state.role_selection_order = [s for s in state.role_selection_order if s not in stray]


def back_target(ctx: StepContext, state: WizardState, current: str) -> str | None:
    """The step "back" rewinds from prompt `current`: the last step answered before it.

    Steps pre-filled by reusing a run are part of that one answer (`reuse_previous`),
    so back undoes the reuse rather than one invisible pre-filled value. Answers of
    steps after the current one (a directive kept while a stale model is asked again)
    are not "before" it and are skipped.
    """
    asked = steps(ctx, state)
    limit = index_of(asked, current)
    for entry in reversed(state.answered):
        if entry.provenance.startswith("reused:"):
            continue
        position = index_of(asked, entry.step)
        if limit is not None and position is not None and position >= limit:
            continue
        return entry.step
    return None
