"""Re-validation: the first answer that no longer holds is rewound, with why.

The profile, the providers, the host or the availability may have changed since the
answers were given; `revalidate` (run by the step loop before every prompt) finds the
first answer that is no longer a selectable option of its prompt and rewinds it,
recording a `StaleNote` the next prompt shows.
"""

from __future__ import annotations

from ..errors import OkstraError
from ..resolver import check_counts
from .base import Step
from .context import StepContext
from .flow import rewind, steps
from .ids import CONFIRM, LEADER_SESSION, ROLE_MODEL, TASK_TYPE, is_role_step, parse_role_step
from .roles import team_blocker
from .state import StaleNote, WizardState

__all__ = ["revalidate"]


def _team_holds(ctx: StepContext, state: WizardState) -> bool:
    """Fast path: every answer of the task type and role steps still holds.

    Exact: each such answer was selectable when a complete team extended the answers
    before it, so when the answers so far (open counts at their minimum) can still be
    completed, every one of them would still be selectable.
    """
    if not state.task_type:
        return True
    try:
        profile = ctx.profile(state.task_type)
        check_counts(profile, state.role_counts)
        asked = {s.id for s in steps(ctx, state)}
        if any(is_role_step(e.step) and e.step not in asked for e in state.answered):
            return False
        ctx.host(state.host_runtime)
        return team_blocker(ctx, state) is None
    except OkstraError:
        return False


def revalidate(ctx: StepContext, state: WizardState) -> StaleNote | None:
    """Rewind the first answer that no longer holds, recording why (`state.stale`).

    The profile, the providers, the host or the availability may have changed since
    the answers were given (a CLI uninstalled, a role removed, a maximum lowered). The
    task type and every role step are checked in order: the first answer that is no
    longer a selectable option of its prompt — rebuilt from the answers before it —
    is rewound with its reason. A wizard with no complete team at all for any answer
    keeps its answers and its prompt says why (`blocked`).
    """
    if _team_holds(ctx, state):
        return None
    if state.task_type:
        try:
            ctx.profile(state.task_type)
        except OkstraError as exc:  # its profile file is gone
            return _rewound(ctx, state, TASK_TYPE, state.task_type, exc.message)
    asked = steps(ctx, state)
    note = _left_profile(ctx, state, {s.id for s in asked})
    if note is not None:
        return note
    decided, note = _first_stale_step(ctx, state, asked)
    if decided:
        return note
    return _stray_counts(ctx, state, asked)


def _left_profile(ctx: StepContext, state: WizardState, known: set[str]) -> StaleNote | None:
    """Rewind the first answered role step the profile no longer asks (None: none).

    A role that left the profile is said by name, never dropped silently. (An ordinal
    beyond a lowered count is caught at its count step.)
    """
    for gone in state.answered:
        parsed = parse_role_step(gone.step)
        if parsed is None or gone.step in known:
            continue
        if _removed(ctx, state, parsed.role):
            return _rewound(ctx, state, gone.step, gone.answer, _gone(ctx, state, parsed.role))
        if parsed.kind != ROLE_MODEL:  # the role's count is no longer asked this way
            reason = ctx.text.get("stale.not_asked", step=gone.step, task_type=state.task_type)
            return _rewound(ctx, state, gone.step, gone.answer, reason)
    return None


def _first_stale_step(
    ctx: StepContext, state: WizardState, asked: list[Step]
) -> tuple[bool, StaleNote | None]:
    """Check the task type and role answers in order against their rebuilt prompts.

    (True, note): decided — the first answer that no longer holds is rewound (note), or
    no answer can hold and the answers are kept (None). (False, None): all hold.
    """
    for step in asked:
        if step.id != TASK_TYPE and not step.role_block:
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
                    rewind(ctx, state, CONFIRM)
                return True, None
            return True, _rewound(ctx, state, step.id, answer, option.disabled_reason)
    return False, None


def _held(state: WizardState, step_id: str, answer: str) -> str:
    """The value a role step's answer stands for in the state (what the team uses)."""
    parsed = parse_role_step(step_id)
    if parsed is None or parsed.kind == LEADER_SESSION:
        return answer
    if parsed.kind == ROLE_MODEL:
        models = state.role_models.get(parsed.role, [])
        return models[parsed.ordinal - 1] if parsed.ordinal <= len(models) else answer
    count = state.role_counts.get(parsed.role)
    return answer if count is None else str(count)


def _stray_counts(ctx: StepContext, state: WizardState, asked: list[Step]) -> StaleNote | None:
    """Counts or models no answer explains (a hand-edited file) are rewound with the
    role steps, naming what is wrong."""
    try:
        check_counts(ctx.profile(state.task_type), state.role_counts)
        team_blocker(ctx, state)
    except OkstraError as exc:
        first = next((s.id for s in asked if s.role_block), None)
        if first is not None:
            return _rewound(ctx, state, first, "", exc.message)
    return None


def _removed(ctx: StepContext, state: WizardState, role: str) -> bool:
    try:
        profile = ctx.profile(state.task_type)
    except OkstraError:
        return True
    return role != "leader" and profile.role(role) is None


def _gone(ctx: StepContext, state: WizardState, role: str) -> str:
    try:
        profile = ctx.profile(state.task_type)
    except OkstraError as exc:
        return exc.message
    if profile.role(role) is None and role != "leader":
        return ctx.text.get("stale.role_removed", role=role, task_type=state.task_type)
    return ctx.text.get("stale.beyond_count", role=role)


def _rewound(
    ctx: StepContext, state: WizardState, step_id: str, answer: str, reason: str
) -> StaleNote:
    rewind(ctx, state, step_id)
    note = StaleNote(step=step_id, answer=answer, reason=reason)
    state.stale = note
    state.confirmed = None
    return note
