"""The step loop: the prompt to ask now (`advance`, re-validating the answers first),
an answer applied to it (`apply_answer`), a sequence replayed, and what the front ends
read. Pure functions of a step context and a working copy of the state (no file I/O).

Grouped prompts: a host with a multi-question tool (`AskUserQuestion`) is offered the
consecutive role-count and role-add prompts of one task type as one `pick_group`
prompt, each question as it is asked once the ones before take their defaults. It is
answered with one JSON object `{step: answer}`, applied in order, each checked as a
single answer is; the caller saves nothing unless all apply. The first question stays
answerable alone.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import replace

from ..errors import AnswerRefused, OkstraError
from ..records import dataclass, fields_of
from ..resolver import Blocker
from . import ids
from .base import StepContext, echo_template, refuse, render_echo, with_notes
from .flow import revalidate, rewind, steps
from .ids import CONFIRM, EDIT_TARGET, ROLE_ADD_KIND, ROLE_COUNT_KIND, parse_role_step, step_kind
from .prompt import AnswerEntry, HistoryEntry, Option, Prompt, PromptMeta, prompt_meta
from .roles import out_of_order, team_blocker
from .state import CHOSEN, DEFAULT_BUNDLED, AnsweredStep, WizardState
from .steps import done_prompt

# Host functions that ask several questions at once (one tab each).
MULTI_QUESTION_FUNCTIONS = frozenset({"AskUserQuestion"})
# AskUserQuestion shows at most four questions at a time.
GROUP_SIZE = 4
# The prompts that do not depend on each other's answers: the counts of one team.
_GROUPED_KINDS = frozenset({ROLE_COUNT_KIND, ROLE_ADD_KIND})
# A simulation never runs longer than a whole wizard can be.
_MAX_SIMULATED = 200


def _blocked(ctx: StepContext, prompt: Prompt, found: Blocker | None) -> Prompt:
    """`prompt` as a `blocked` prompt: nothing selectable, and why, with what to do."""
    if found is None:
        reasons = [o.disabled_reason for o in prompt.options if o.disabled_reason]
        found = Blocker(tuple(reasons[:1]), reasons[0] if reasons else "")
    advice = found.advice or ctx.text.get("blocked.nothing")
    # The headline says why; each option only points at it (not the whole text again).
    short = ctx.text.get("blocked.option")
    options = tuple(
        o if not o.selectable else replace(o, disabled_reason=short) for o in prompt.options
    )
    meta: PromptMeta = {**prompt.meta}
    meta["blocked"] = {"lines": list(found.lines), "advice": advice}
    return replace(
        prompt,
        kind="blocked",
        options=options,
        default=None,
        label=ctx.text.get("blocked.label"),
        help=ctx.text.get("blocked.help", advice=advice),
        meta=meta,
    )


def _finish(ctx: StepContext, state: WizardState, prompt: Prompt) -> Prompt:
    """Say why no team can be formed (instead of walking on), and what was rewound."""
    try:
        found = team_blocker(ctx, state)
    except OkstraError as exc:  # a setup okstra cannot read a team from: say why
        found = Blocker((exc.message,), exc.message)
    if found is not None or (
        prompt.kind == "pick" and all(o.disabled_reason is not None for o in prompt.options)
    ):
        prompt = _blocked(ctx, prompt, found)
    note = state.stale
    if note is not None:
        meta: PromptMeta = {**prompt.meta}
        meta["stale"] = {"step": note.step, "answer": note.answer, "reason": note.reason}
        line = ctx.text.get("stale.note", **meta["stale"])
        prompt = with_notes(replace(prompt, meta=meta), [line])
    return prompt


def default_to_accept(prompt: Prompt, state: WizardState) -> str | None:
    """The answer `accept_defaults` gives `prompt`, or None where a person must answer."""
    kind = prompt.step_kind
    default = prompt.default
    if kind in ids.DEFAULTED_KINDS and prompt.kind == "text":
        return default  # a text step with a default (the run's base: the project's commit)
    option = next((o for o in prompt.options if o.value == default), None)
    if kind not in ids.DEFAULTED_KINDS or option is None or option.disabled_reason is not None:
        return None
    if kind != ids.ROLE_MODEL_KIND or state.remembered_answers.get(prompt.id) == default:
        return default
    # A model is a default only when a default candidate names it, not because it is
    # merely the first one that can run.
    return default if str(option.meta.get("provenance") or "").startswith("default:") else None


def advance(ctx: StepContext, state: WizardState) -> Prompt:
    """The prompt to ask now. May rewind an answer that no longer holds (see `revalidate`)."""
    if not state.aborted:
        revalidate(ctx, state)
    if state.aborted or state.confirmed is True:
        return done_prompt(ctx, state)
    for step in steps(ctx, state):
        if not state.is_answered(step.id) and step.applies(ctx, state):
            return _finish(ctx, state, step.build(ctx, state))
    return done_prompt(ctx, state)


def apply_answer(
    ctx: StepContext,
    state: WizardState,
    answer: str,
    step: str | None = None,
    *,
    asked: Prompt | None = None,
    defaulted: bool = False,
) -> tuple[str, Prompt]:
    """Submit `answer` to the current prompt of `state` (a working copy, changed);
    returns (echo, next prompt). `step`: the step id it is meant for (a mismatch is
    refused); `asked`: the prompt `advance` just gave for this very state; `defaulted`:
    taken by "every later answer its default" (`accept_defaults`). `AnswerRefused`: the
    answer does not fit (the caller discards the copy)."""
    prompt = asked if asked is not None else advance(ctx, state)
    if step is not None and step != prompt.id:
        problem = out_of_order(ctx, state, step)
        raise problem or refuse(ctx, "wrong_step", step=step, current=prompt.id)
    if prompt.kind == "done":
        raise refuse(ctx, "finished")
    if prompt.kind == "blocked":
        raise refuse(ctx, "blocked", reason=prompt.meta.get("blocked", {}).get("advice", ""))
    label = answer
    option: Option | None = None
    if prompt.kind == "pick":
        option = prompt.option(answer)
        if option is None:
            selectable = ", ".join(o.value for o in prompt.selectable)
            raise refuse(ctx, "not_an_option", answer=answer, options=selectable)
        if option.disabled_reason is not None:
            raise refuse(ctx, "option_disabled", answer=answer, reason=option.disabled_reason)
        label = option.label
    state.stale = None
    if prompt.id == EDIT_TARGET:
        rewind(ctx, state, answer)
        echo = render_echo(prompt.echo_template, answer, label)
        return echo, advance(ctx, state)
    current = next(s for s in steps(ctx, state) if s.id == prompt.id)
    position = len(state.answered)
    stored = current.submit(ctx, state, answer, prompt)
    stored_answer = stored if prompt.kind == "text" else answer
    provenance = CHOSEN
    scope = option.meta.get("provenance", "") if option is not None else ""
    if answer == prompt.default and scope.startswith("default:"):
        # Taking the offered default records where that default came from.
        provenance = scope
    elif (
        defaulted and answer == prompt.default and state.remembered_answers.get(prompt.id) != answer
    ):
        # Taken by "every later answer its default" (`d`): okstra's own default (the
        # recommended task type, count, …), unless the person had chosen it before.
        provenance = DEFAULT_BUNDLED
    if current.role_block and prompt.id not in state.role_selection_order:
        state.role_selection_order.append(prompt.id)
    echo_label = label if prompt.kind == "pick" else stored_answer
    echo = render_echo(prompt.echo_template, stored_answer, echo_label)
    state.answered.insert(
        position,
        AnsweredStep(step=prompt.id, answer=stored_answer, provenance=provenance, echo=echo),
    )
    state.remembered_answers.pop(prompt.id, None)
    return echo, advance(ctx, state)


@dataclass(frozen=True)
class ReplayResult:
    """What replaying an answers file did: entries applied (pre-filled ones included),
    the last echo and next prompt, and the first refusal with its 0-based index."""

    applied: int
    echo: str
    next: Prompt
    error: str | None = None
    index: int | None = None


def replay_answers(
    ctx: StepContext, current: WizardState, entries: Iterable[AnswerEntry]
) -> tuple[WizardState, ReplayResult]:
    """Apply `entries` to a copy of `current`, with one context for all (its memoised
    teams are keyed by the answers they were built for).

    Each answer goes to its step when the wizard asks it, whatever its place in the
    file; one already answered alike (pre-filled) counts as applied. The replay ends at
    the first refused answer, or when the wizard asks a step the file does not answer
    (or is done): an answer left over then is an error naming it.
    """
    listed = list(entries)
    applied = 0
    echo = ""
    nxt: Prompt | None = None
    work = current.copy()
    pending: dict[str, int] = {}
    for index, entry in enumerate(listed):
        if entry.step in pending:
            prompt = nxt or advance(ctx, work.copy())
            return work, ReplayResult(applied, echo, prompt, "this step is answered twice", index)
        if work.answer_of(entry.step) == entry.answer:
            applied += 1
        else:
            pending[entry.step] = index
    while pending:
        trial = work.copy()
        # `nxt` was worked out for `work` as it is (`trial` equals it): reuse it.
        prompt = nxt if nxt is not None else advance(ctx, trial)
        if prompt.id not in pending:
            nxt = prompt
            break
        index = pending.pop(prompt.id)
        try:
            echo, nxt = apply_answer(ctx, trial, listed[index].answer, prompt.id, asked=prompt)
        except AnswerRefused as exc:
            return work, ReplayResult(applied, echo, prompt, exc.message, index)
        work = trial
        applied += 1
    final = nxt or advance(ctx, work.copy())
    if pending:
        index = min(pending.values())
        asks = "is done" if final.kind == "done" else f"asks {final.id!r}"
        error = f"left over: the wizard {asks}, and does not ask this step now"
        return work, ReplayResult(applied, echo, final, error, index)
    return work, ReplayResult(applied, echo, final)


def asking_order(ctx: StepContext, state: WizardState) -> list[AnsweredStep]:
    """The answered steps in the order the wizard asks them (not answer order)."""
    order = {step.id: i for i, step in enumerate(steps(ctx, state))}
    return sorted(state.answered, key=lambda e: order.get(e.step, len(order)))


def history(ctx: StepContext, state: WizardState) -> list[HistoryEntry]:
    """The answered steps in answer order, with echo and a short step title."""
    out: list[HistoryEntry] = []
    for entry in state.answered:
        kind = step_kind(entry.step)
        parsed = parse_role_step(entry.step)
        values = {"role": "", "ordinal": 0} if parsed is None else fields_of(parsed, "role ordinal")
        echo = entry.echo or render_echo(
            echo_template(ctx, kind, **values), entry.answer, entry.answer
        )
        label = ctx.text.get(f"{kind}.title", **values)
        out.append(HistoryEntry(entry.step, entry.answer, echo, label, entry.provenance))
    return out


def progress(ctx: StepContext, state: WizardState) -> tuple[int, int]:
    """(answered steps, total): the steps that apply, answered or still to ask (role
    counts not chosen yet at their recommended value)."""
    answered = len(state.answered)
    if state.confirmed is True or state.aborted:
        return answered, answered
    remaining = 0
    if not state.task_type:
        remaining += 3  # a typical team before the profile is known: a count, two models
    for step in steps(ctx, state):
        if step.id == EDIT_TARGET or state.is_answered(step.id):
            continue
        try:
            if step.applies(ctx, state):
                remaining += 1
        except OkstraError:
            remaining += 1
    return answered, answered + remaining


def groups_prompts(available_functions: Collection[str]) -> bool:
    """Whether a host with these functions is offered grouped prompts."""
    return not MULTI_QUESTION_FUNCTIONS.isdisjoint(available_functions)


def _groupable(prompt: Prompt) -> bool:
    return prompt.kind == "pick" and prompt.step_kind in _GROUPED_KINDS


def group_prompt(ctx: StepContext, state: WizardState, prompt: Prompt) -> Prompt:
    """`prompt` (computed for `state`, not changed), or the `pick_group` prompt it
    starts for a multi-question host."""
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
    """Apply one answer per question of `group` to `state` (a working copy), in order;
    returns the echoes joined and the next prompt. `AnswerRefused`: an unknown key, a
    missing or non-string answer, or a refused answer (naming the step)."""
    steps = [q.id for q in group.questions]
    for key in answers:
        if key not in steps:
            raise refuse(ctx, "group_unknown_step", step=key, steps=", ".join(steps))
    echoes: list[str] = []
    nxt = advance(ctx, state)
    for step in steps:
        value = answers.get(step)
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str):
            raise refuse(ctx, "group_missing", step=step)
        try:
            echo, nxt = apply_answer(ctx, state, value, step, asked=nxt)
        except AnswerRefused as exc:
            raise AnswerRefused(f"{step}: {exc.message}") from None
        echoes.append(echo)
    return "; ".join(echoes), nxt


def simulated_progress(ctx: StepContext, state: WizardState) -> tuple[int, int]:
    """(answered steps, total), the total found by taking every default from here (in a
    copy, up to a prompt without one or the confirmation; the rest as `progress`
    estimates): it stays the same while a person takes the defaults."""
    answered = len(state.answered)
    if state.confirmed is True or state.aborted:
        return answered, answered
    work = state.copy()
    prompt = advance(ctx, work)
    for _ in range(_MAX_SIMULATED):
        if prompt.kind != "pick" or prompt.id in (CONFIRM, EDIT_TARGET) or prompt.default is None:
            break
        try:
            prompt = apply_answer(ctx, work, prompt.default, prompt.id, asked=prompt)[1]
        except (AnswerRefused, OkstraError):
            break
    total = progress(ctx, work)[1]
    return answered, max(total, answered)
