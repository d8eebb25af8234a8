"""Grouped prompts for agent hosts, and the progress total simulated from the defaults.

A host whose functions include a multi-question tool (`AskUserQuestion`: one tab per
question) is offered consecutive independent prompts — the role-count and role-add
prompts of one task type — as one `pick_group` prompt whose `questions` are the full
prompts, each as it is asked once the questions before it take their defaults. The
group is answered with one JSON object `{step: answer}`: the answers are applied in
order, each checked exactly as a single answer is (against the prompt it meets then),
and a bad one is refused naming its step; the caller saves nothing unless all apply.
The first question stays answerable on its own (`--step <its id>`, a plain answer).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from ..errors import AnswerRefused, OkstraError
from .context import StepContext
from .engine import advance, apply_answer, progress
from .ids import CONFIRM, EDIT_TARGET, ROLE_ADD_KIND, ROLE_COUNT_KIND
from .prompt import Prompt, prompt_meta
from .state import WizardState

__all__ = [
    "GROUP_SIZE",
    "MULTI_QUESTION_FUNCTIONS",
    "apply_group",
    "group_prompt",
    "groups_prompts",
    "simulated_progress",
]

# Host functions that ask several questions at once (one tab each).
MULTI_QUESTION_FUNCTIONS = frozenset({"AskUserQuestion"})
# AskUserQuestion shows at most four questions at a time.
GROUP_SIZE = 4
# The prompts that do not depend on each other's answers: the counts of one team.
_GROUPED_KINDS = frozenset({ROLE_COUNT_KIND, ROLE_ADD_KIND})
# A simulation never runs longer than a whole wizard can be.
_MAX_SIMULATED = 200


def groups_prompts(available_functions: Collection[str]) -> bool:
    """Whether a host with these functions is offered grouped prompts."""
    return not MULTI_QUESTION_FUNCTIONS.isdisjoint(available_functions)


def _groupable(prompt: Prompt) -> bool:
    return prompt.kind == "pick" and prompt.step_kind in _GROUPED_KINDS


def group_prompt(ctx: StepContext, state: WizardState, prompt: Prompt) -> Prompt:
    """`prompt`, or the `pick_group` prompt it starts for a multi-question host.

    Args:
        ctx: the step context.
        state: the state `prompt` was computed for (not changed).
        prompt: the current prompt.
    """
    if not groups_prompts(state.available_functions) or not _groupable(prompt):
        return prompt
    questions = [prompt]
    work = state.copy()
    current = prompt
    while len(questions) < GROUP_SIZE and current.default is not None:
        try:
            current = apply_answer(ctx, work, current.default, current.id, asked=current)[1]
        except (AnswerRefused, OkstraError):
            break
        if not _groupable(current):
            break
        questions.append(current)
    if len(questions) == 1:
        return prompt
    return Prompt(
        id=prompt.id,
        kind="pick_group",
        label=ctx.text.get("group.title", count=len(questions)),
        help=ctx.text.get("group.help", steps=", ".join(q.id for q in questions)),
        meta=prompt_meta(prompt.step_kind),
        questions=tuple(questions),
    )


def apply_group(
    ctx: StepContext, state: WizardState, group: Prompt, answers: Mapping[str, object]
) -> tuple[str, Prompt]:
    """Apply one answer per question of `group` to `state` (a working copy), in order.

    Returns:
        (the echoes joined, the next prompt).

    Raises:
        AnswerRefused: a key that is not a question of the group, a missing or
            non-string answer, or an answer its prompt refuses — naming the step.
    """
    steps = [q.id for q in group.questions]
    for key in answers:
        if key not in steps:
            raise AnswerRefused(
                ctx.text.get("errors.group_unknown_step", step=key, steps=", ".join(steps))
            )
    echoes: list[str] = []
    nxt = advance(ctx, state)
    for step in steps:
        value = answers.get(step)
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str):
            raise AnswerRefused(ctx.text.get("errors.group_missing", step=step))
        try:
            echo, nxt = apply_answer(ctx, state, value, step, asked=nxt)
        except AnswerRefused as exc:
            raise AnswerRefused(f"{step}: {exc.message}") from None
        echoes.append(echo)
    return "; ".join(echoes), nxt


def simulated_progress(ctx: StepContext, state: WizardState) -> tuple[int, int]:
    """(answered steps, total), the total found by answering every default from here.

    The defaults are taken, in a copy, until a prompt without one (or the confirmation):
    the steps met on the way are counted exactly, the rest estimated as `progress`
    does. Answering the defaults follows the same path, so the total stays the same
    while a person does.
    """
    answered = len(state.answered)
    if state.confirmed is True or state.aborted:
        return answered, answered
    work = state.copy()
    prompt = advance(ctx, work)
    for _ in range(_MAX_SIMULATED):
        if prompt.kind != "pick" or prompt.id in (CONFIRM, EDIT_TARGET):
            break
        if prompt.default is None:
            break
        try:
            prompt = apply_answer(ctx, work, prompt.default, prompt.id, asked=prompt)[1]
        except (AnswerRefused, OkstraError):
            break
    total = progress(ctx, work)[1]
    return answered, max(total, answered)
