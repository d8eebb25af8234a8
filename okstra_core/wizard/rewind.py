"""Edit and rewind (SPEC §6.3).

Choosing an answered step rewinds to it:

* a role step: keep the role selection before it (in `roleSelectionOrder`), drop it,
  every role step after it and the steps after the role block;
* a static step before the role block: reset that step's fields and every later static
  step's, and clear the whole role selection;
* any other static step: reset that step's fields and every later step's.

In every case the confirmation is reset. Dropped answers are remembered
(`remembered_answers`) and offered as the default when their step is asked again.
"""

from __future__ import annotations

from typing import Any

from .roles import drop_role_steps, is_role_step, parse_role_step
from .state import WizardState
from .steps import NOT_REMEMBERED, STATIC_STEPS, STEP_BY_ID, STEP_INDEX


def _reset_field(state: WizardState, name: str) -> None:
    info = WizardState.model_fields[name]
    value: Any = info.default_factory() if info.default_factory else info.default  # type: ignore[call-arg]
    setattr(state, name, value)


def _drop_static(state: WizardState, step_ids: set[str]) -> None:
    for entry in state.answered:
        if entry.step in step_ids and entry.step not in NOT_REMEMBERED:
            state.remembered_answers[entry.step] = entry.answer
    state.answered = [e for e in state.answered if e.step not in step_ids]


def clear_role_selection(state: WizardState) -> None:
    """Forget every count and model (remembering the answers)."""
    drop_role_steps(state, {e.step for e in state.answered if is_role_step(e.step)})
    state.role_counts = {}
    state.role_models = {}
    state.role_selection_order = []


def _reset_confirmation(state: WizardState) -> None:
    _drop_static(state, set(NOT_REMEMBERED))
    state.confirmed = None
    state.aborted = False
    state.edit_target = ""


def rewind_role(state: WizardState, step_id: str) -> None:
    """Keep the role selection before `step_id`; drop it and everything after it."""
    order = state.role_selection_order
    if step_id in order:
        index = order.index(step_id)
    else:
        # Answered but not in the order (a hand-edited file): drop from the end.
        order.append(step_id)
        index = len(order) - 1
    kept, removed = order[:index], set(order[index:])
    kept_counts = set()
    kept_models: dict[str, int] = {}
    for sid in kept:
        parsed = parse_role_step(sid)
        if parsed is None:
            continue
        if parsed.kind in ("role-count", "role-add"):
            kept_counts.add(parsed.role)
        elif parsed.kind == "role-model":
            kept_models[parsed.role] = kept_models.get(parsed.role, 0) + 1
    state.role_counts = {r: c for r, c in state.role_counts.items() if r in kept_counts}
    state.role_models = {
        r: models[: kept_models[r]]
        for r, models in state.role_models.items()
        if kept_models.get(r, 0) > 0
    }
    drop_role_steps(state, removed | {step_id})
    state.role_selection_order = kept
    # "Drop it and everything after it" (SPEC §6.3): the steps after the role block go
    # too; their answers are remembered, so pressing Enter brings them back.
    _reset_after_role_block(state)
    _reset_confirmation(state)


def _reset_after_role_block(state: WizardState) -> None:
    later = [step for step in STATIC_STEPS if not step.before_role_block]
    for step in later:
        for name in step.owns:
            _reset_field(state, name)
    _drop_static(state, {step.id for step in later})


def rewind_static(state: WizardState, step_id: str) -> None:
    """Reset `step_id`'s fields and every later static step's (and roles if before them)."""
    index = STEP_INDEX[step_id]
    later = STATIC_STEPS[index:]
    for step in later:
        for name in step.owns:
            _reset_field(state, name)
    _drop_static(state, {s.id for s in later})
    if STATIC_STEPS[index].before_role_block:
        clear_role_selection(state)
    _reset_confirmation(state)


def rewind(state: WizardState, step_id: str) -> None:
    """Rewind to an answered step (the caller has checked that it is answered)."""
    if is_role_step(step_id):
        rewind_role(state, step_id)
    else:
        rewind_static(state, step_id)


def back_target(state: WizardState, current: str) -> str | None:
    """The step "back" rewinds from prompt `current`: the last step answered before it.

    Steps pre-filled by reusing a run are part of that one answer (`reuse_previous`),
    so back undoes the reuse rather than one invisible pre-filled value. While a step
    of the role block (or before it) is asked, answers kept from after the block (a
    directive kept through a role rewind) are not "before" it and are skipped.
    """
    asking_late = current in STEP_BY_ID and not STEP_BY_ID[current].before_role_block
    asking_late = asking_late or current == "done"
    for entry in reversed(state.answered):
        if entry.provenance.startswith("reused:"):
            continue
        step = STEP_BY_ID.get(entry.step)
        if not asking_late and step is not None and not step.before_role_block:
            continue
        return entry.step
    return None
