"""The static steps of the wizard, in order, around the role block.

Each step says when it is asked (`applies`), how its prompt looks (`build`), how an
answer changes the state (`submit`, on a working copy; raise `AnswerRefused` to refuse)
and which state fields it owns (reset by a rewind). A step is asked when it applies
and has not been answered; the role block (roles.py) sits between `reuse_previous`
and `directive_pick`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING
from dataclasses import fields as dataclass_fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import AnswerRefused, OkstraError
from .base import Step, make_prompt, refuse
from .confirm import confirmation, needs_approved_plan
from .context import StepContext
from .ids import (
    ABORT_ANSWER,
    APPROVED_PLAN,
    BRIEF,
    CHOOSE_ANSWER,
    CONFIRM,
    CONFIRM_ANSWER,
    DIRECTIVE,
    DIRECTIVE_PICK,
    DONE,
    EDIT_ANSWER,
    EDIT_TARGET,
    NEW_TASK_ANSWER,
    NOT_REMEMBERED,
    RELATED_TASKS,
    RELATED_TASKS_PICK,
    REUSE_PREVIOUS,
    SKIP_ANSWER,
    TASK_GROUP,
    TASK_ID,
    TASK_PICK,
    TASK_TYPE,
    WRITE_ANSWER,
    StepKind,
)
from .prompt import Option, Prompt, prompt_meta
from .reuse import current_task, reuse_applies, reuse_build, reuse_submit
from .roles import check_complete_team, profile_blockers
from .run_base import BASE_REF_STEP
from .state import EXISTING_TASK, NEW_TASK, AnsweredStep, WizardState

if TYPE_CHECKING:
    from ..tasks import TaskEntry

# `tasks` and `plans` are imported by the steps that use them: a role step needs neither.


_STATE_FIELDS = {f.name: f for f in dataclass_fields(WizardState)}


def _resets(*fields: str) -> Callable[[WizardState], None]:
    """A `reset` putting `fields` back to their defaults."""

    def reset(state: WizardState) -> None:
        for name in fields:
            info = _STATE_FIELDS[name]
            value: Any = (
                info.default_factory() if info.default_factory is not MISSING else info.default
            )
            setattr(state, name, value)

    return reset


def static_step(
    step_id: StepKind,
    applies: Callable[[StepContext, WizardState], bool],
    build: Callable[[StepContext, WizardState], Prompt],
    submit: Callable[[StepContext, WizardState, str, Prompt], str],
    owns: tuple[str, ...] = (),
) -> Step:
    return Step(step_id, step_id, applies, build, submit, _resets(*owns))


# ---------------------------------------------------------------------------- helpers


def _project(state: WizardState) -> Path:
    return Path(state.project_root)


def _project_file(ctx: StepContext, state: WizardState, raw: str, what: str) -> str:
    """Validate a path typed by a person: exists, a file, inside the project.

    Returns:
        The path relative to the project root (POSIX separators).
    """
    text = raw.strip()
    if not text:
        raise refuse(ctx, "path_empty", what=what)
    root = _project(state).resolve()
    candidate = Path(text).expanduser()
    if not candidate.is_absolute():
        candidate = root / candidate
    try:
        resolved = candidate.resolve(strict=True)
    except (FileNotFoundError, NotADirectoryError):
        raise refuse(ctx, "path_missing", what=what, path=text) from None
    except (OSError, RuntimeError, ValueError) as exc:
        raise refuse(ctx, "path_unreadable", what=what, path=text, reason=str(exc)) from None
    if not resolved.is_relative_to(root):
        raise refuse(ctx, "path_outside", what=what, path=text, root=str(root))
    if not resolved.is_file():
        raise refuse(ctx, "path_not_file", what=what, path=text)
    return resolved.relative_to(root).as_posix()


def _other_tasks(ctx: StepContext, state: WizardState) -> list[TaskEntry]:
    return [t for t in ctx.tasks if t.key != state.task_key and t.error is None]


def _yes_no_options(ctx: StepContext, kind: str, values: tuple[str, ...]) -> tuple[Option, ...]:
    return tuple(Option(value=v, label=ctx.text.get(f"{kind}.option.{v}")) for v in values)


def _gate_step(
    step_id: StepKind,
    go: str,
    field: str,
    applies: Callable[[StepContext, WizardState], bool],
) -> Step:
    """A `skip`/`go` pick in front of an optional text step that fills `field`.

    `skip` (the default) clears `field`, so an earlier answer does not linger.
    """

    def build(ctx: StepContext, state: WizardState) -> Prompt:
        return make_prompt(
            ctx,
            state,
            step_id,
            "pick",
            step_id,
            options=_yes_no_options(ctx, step_id, (SKIP_ANSWER, go)),
            default=SKIP_ANSWER,
        )

    def submit(_ctx: StepContext, state: WizardState, answer: str, _p: Prompt) -> str:
        if answer == SKIP_ANSWER:
            setattr(state, field, "")
        return ""

    return static_step(step_id, applies, build, submit, (field,))


def _gate_chosen(step_id: str, go: str) -> Callable[[StepContext, WizardState], bool]:
    """`applies` of the text step behind a `_gate_step`: its pick was answered `go`."""

    def applies(_ctx: StepContext, state: WizardState) -> bool:
        return state.answer_of(step_id) == go

    return applies


# ---------------------------------------------------------------------------- task_pick


def _task_pick_build(ctx: StepContext, state: WizardState) -> Prompt:
    options = [
        Option(value=NEW_TASK_ANSWER, label=ctx.text.get(f"task_pick.option.{NEW_TASK_ANSWER}"))
    ]
    for task in ctx.tasks:
        if task.error is not None:
            options.append(
                Option(
                    value=task.key,
                    label=ctx.text.get("task_pick.option.unreadable", key=task.key),
                    disabled_reason=task.error,
                )
            )
            continue
        options.append(
            Option(
                value=task.key,
                label=ctx.text.get(
                    "task_pick.option.existing",
                    key=task.key,
                    phase=task.current_phase or "--",
                    next=task.pointer.cell(),
                ),
                meta={"phase": task.current_phase, "next": task.pointer.cell()},
            )
        )
    return make_prompt(
        ctx, state, TASK_PICK, "pick", TASK_PICK, options=tuple(options), default=NEW_TASK_ANSWER
    )


def _task_pick_submit(ctx: StepContext, state: WizardState, answer: str, _p: Prompt) -> str:
    if answer == NEW_TASK_ANSWER:
        state.task_mode = NEW_TASK
        return ""
    task = next((t for t in ctx.tasks if t.key == answer), None)
    if task is None:
        raise refuse(ctx, "unknown_task", key=answer)
    state.task_mode = EXISTING_TASK
    state.task_key = task.key
    state.task_group = task.group
    state.task_id = task.id
    state.brief_path = ""
    if task.brief_path:
        # Keep the manifest's brief only when it is still a file inside the project;
        # otherwise the brief step asks for one.
        try:
            state.brief_path = _project_file(ctx, state, task.brief_path, "brief")
        except AnswerRefused:
            state.brief_path = ""
    return ""


# ---------------------------------------------------------------------------- group / id


def _task_group_build(ctx: StepContext, state: WizardState) -> Prompt:
    return make_prompt(ctx, state, TASK_GROUP, "text", "task_group")


def _task_group_submit(ctx: StepContext, state: WizardState, answer: str, _p: Prompt) -> str:
    from ..tasks import check_segment

    try:
        state.task_group = check_segment(answer, ctx.text.get("task_group.what"))
    except OkstraError as exc:
        raise AnswerRefused(exc.message) from None
    return state.task_group


def _task_id_build(ctx: StepContext, state: WizardState) -> Prompt:
    return make_prompt(
        ctx, state, TASK_ID, "text", "task_id", label_values={"group": state.task_group}
    )


def _task_id_submit(ctx: StepContext, state: WizardState, answer: str, _p: Prompt) -> str:
    from ..tasks import check_segment, find_task

    try:
        task_id = check_segment(answer, ctx.text.get("task_id.what"))
    except OkstraError as exc:
        raise AnswerRefused(exc.message) from None
    key = f"{state.task_group}/{task_id}"
    if find_task(_project(state), key) is not None:
        raise refuse(ctx, "task_exists", key=key)
    state.task_id = task_id
    state.task_key = key
    return task_id


# ---------------------------------------------------------------------------- brief


def _brief_applies(_ctx: StepContext, state: WizardState) -> bool:
    return state.task_mode == NEW_TASK or (
        state.task_mode == EXISTING_TASK and not state.brief_path
    )


def _brief_build(ctx: StepContext, state: WizardState) -> Prompt:
    return make_prompt(
        ctx, state, BRIEF, "text", "brief", label_values={"root": state.project_root}
    )


def _brief_submit(ctx: StepContext, state: WizardState, answer: str, _p: Prompt) -> str:
    state.brief_path = _project_file(ctx, state, answer, ctx.text.get("brief.what"))
    return state.brief_path


# ---------------------------------------------------------------------------- task_type


def recommended_task_type(ctx: StepContext, state: WizardState) -> str:
    """The recommended task type: an existing task's next-phase pointer when `ready`.

    A pointer that is not `ready` (prepare lowers it to `pending` until the phase's run
    completes) recommends nothing, so the first task type is offered first.
    """
    types = list(ctx.catalog.profiles)
    task = current_task(ctx, state)
    if task is not None and task.pointer.ready and task.pointer.phase in types:
        return task.pointer.phase
    return types[0]


def _task_type_build(ctx: StepContext, state: WizardState) -> Prompt:
    recommended = recommended_task_type(ctx, state)
    blockers = profile_blockers(ctx, state)
    if blockers.get(recommended) is not None:
        # The recommended phase cannot be staffed here: recommend the first that can.
        recommended = next((t for t, b in blockers.items() if b is None), recommended)
    ordered = [recommended, *(t for t in ctx.catalog.profiles if t != recommended)]
    options = []
    for task_type in ordered:
        profile = ctx.catalog.profiles[task_type]
        key = (
            "task_type.option.recommended" if task_type == recommended else "task_type.option.plain"
        )
        found = blockers.get(task_type)
        options.append(
            Option(
                value=task_type,
                label=ctx.text.get(key, task_type=task_type, title=profile.title or task_type),
                disabled_reason=None if found is None else found.advice,
                meta={"summary": profile.summary},
            )
        )
    default = recommended if blockers.get(recommended) is None else None
    return make_prompt(
        ctx,
        state,
        TASK_TYPE,
        "pick",
        "task_type",
        options=tuple(options),
        default=default,
        meta={"recommended": recommended},
    )


def _task_type_submit(_ctx: StepContext, state: WizardState, answer: str, _p: Prompt) -> str:
    state.task_type = answer
    return ""


# ---------------------------------------------------------------------------- approved_plan


def _approved_plan_build(ctx: StepContext, state: WizardState) -> Prompt:
    return make_prompt(
        ctx,
        state,
        APPROVED_PLAN,
        "text",
        "approved_plan",
        label_values={"task_type": state.task_type},
    )


def _approved_plan_submit(ctx: StepContext, state: WizardState, answer: str, _p: Prompt) -> str:
    path = _project_file(ctx, state, answer, ctx.text.get("approved_plan.what"))
    from ..plans import check_plan_approval

    try:  # an unapproved plan is refused here, not first by prepare
        check_plan_approval(path, project_root=_project(state))
    except OkstraError as exc:
        raise AnswerRefused(exc.render()) from None
    state.approved_plan_path = path
    return state.approved_plan_path


# ---------------------------------------------------------------------------- directive


def _directive_build(ctx: StepContext, state: WizardState) -> Prompt:
    return make_prompt(ctx, state, DIRECTIVE, "text", "directive", default=state.directive or None)


def _directive_submit(ctx: StepContext, state: WizardState, answer: str, _p: Prompt) -> str:
    text = answer.strip()
    if not text:
        raise refuse(ctx, "directive_empty")
    state.directive = text
    return text


# ---------------------------------------------------------------------------- related tasks


def _related_pick_applies(ctx: StepContext, state: WizardState) -> bool:
    return bool(_other_tasks(ctx, state))


def _related_build(ctx: StepContext, state: WizardState) -> Prompt:
    keys = [t.key for t in _other_tasks(ctx, state)]
    return make_prompt(
        ctx,
        state,
        RELATED_TASKS,
        "text",
        "related_tasks",
        label_values={"tasks": ", ".join(keys)},
        meta={"tasks": keys},
    )


def _related_submit(ctx: StepContext, state: WizardState, answer: str, _p: Prompt) -> str:
    known = {t.key for t in _other_tasks(ctx, state)}
    chosen: list[str] = []
    for part in answer.replace(",", " ").split():
        if part not in known:
            raise refuse(ctx, "unknown_related", key=part, known=", ".join(sorted(known)))
        if part not in chosen:
            chosen.append(part)
    if not chosen:
        raise refuse(ctx, "related_empty")
    state.related_tasks_raw = ",".join(chosen)
    return state.related_tasks_raw


# ---------------------------------------------------------------------------- confirm / edit


def _confirm_build(ctx: StepContext, state: WizardState) -> Prompt:
    block = confirmation(ctx, state)
    return make_prompt(
        ctx,
        state,
        CONFIRM,
        "pick",
        CONFIRM,
        options=_yes_no_options(ctx, CONFIRM, (CONFIRM_ANSWER, EDIT_ANSWER, ABORT_ANSWER)),
        default=CONFIRM_ANSWER,
        meta={"confirmation": block.text},
    )


def _confirm_submit(ctx: StepContext, state: WizardState, answer: str, _p: Prompt) -> str:
    if answer == CONFIRM_ANSWER:
        check_complete_team(ctx, state)
        state.confirmed = True
    elif answer == EDIT_ANSWER:
        state.confirmed = False
    else:
        state.aborted = True
    return ""


def _edit_target_applies(_ctx: StepContext, state: WizardState) -> bool:
    return state.confirmed is False


def edit_candidates(state: WizardState) -> list[AnsweredStep]:
    """Every answered step in answer order, except confirm/edit themselves."""
    return [e for e in state.answered if e.step not in NOT_REMEMBERED]


def _edit_target_build(ctx: StepContext, state: WizardState) -> Prompt:
    options = tuple(
        Option(
            value=entry.step,
            label=ctx.text.get("edit_target.option", step=entry.step, answer=entry.answer),
            meta={"provenance": entry.provenance},
        )
        for entry in edit_candidates(state)
    )
    return make_prompt(ctx, state, EDIT_TARGET, "pick", "edit_target", options=options)


def _edit_target_submit(_ctx: StepContext, _state: WizardState, answer: str, _p: Prompt) -> str:
    # The rewind itself is done by the engine (it needs the whole step list); this
    # only names the target for the echo.
    return answer


def done_prompt(ctx: StepContext, state: WizardState) -> Prompt:
    key = "done.aborted" if state.aborted else "done.confirmed"
    return Prompt(
        id=DONE,
        kind="done",
        label=ctx.text.get(key),
        echo_template="",
        help=ctx.text.optional("done.help"),
        meta=prompt_meta(DONE, {"aborted": state.aborted, "confirmed": state.confirmed is True}),
    )


def _always(_ctx: StepContext, _state: WizardState) -> bool:
    return True


def _new_task(_ctx: StepContext, state: WizardState) -> bool:
    return state.task_mode == NEW_TASK


# The static steps before the role steps, and after them.
EARLY_STEPS: tuple[Step, ...] = (
    static_step(
        TASK_PICK,
        _always,
        _task_pick_build,
        _task_pick_submit,
        ("task_mode", "task_key", "task_group", "task_id", "brief_path"),
    ),
    static_step(
        TASK_GROUP, _new_task, _task_group_build, _task_group_submit, ("task_group", "task_key")
    ),
    static_step(TASK_ID, _new_task, _task_id_build, _task_id_submit, ("task_id", "task_key")),
    static_step(BRIEF, _brief_applies, _brief_build, _brief_submit, ("brief_path",)),
    static_step(TASK_TYPE, _always, _task_type_build, _task_type_submit, ("task_type",)),
    static_step(
        APPROVED_PLAN,
        needs_approved_plan,
        _approved_plan_build,
        _approved_plan_submit,
        ("approved_plan_path",),
    ),
    BASE_REF_STEP,
    static_step(REUSE_PREVIOUS, reuse_applies, reuse_build, reuse_submit),
)
LATE_STEPS: tuple[Step, ...] = (
    _gate_step(DIRECTIVE_PICK, WRITE_ANSWER, "directive", _always),
    static_step(
        DIRECTIVE,
        _gate_chosen(DIRECTIVE_PICK, WRITE_ANSWER),
        _directive_build,
        _directive_submit,
        ("directive",),
    ),
    _gate_step(RELATED_TASKS_PICK, CHOOSE_ANSWER, "related_tasks_raw", _related_pick_applies),
    static_step(
        RELATED_TASKS,
        _gate_chosen(RELATED_TASKS_PICK, CHOOSE_ANSWER),
        _related_build,
        _related_submit,
        ("related_tasks_raw",),
    ),
    static_step(CONFIRM, _always, _confirm_build, _confirm_submit, ("confirmed", "aborted")),
    static_step(
        EDIT_TARGET,
        _edit_target_applies,
        _edit_target_build,
        _edit_target_submit,
        ("edit_target",),
    ),
)
