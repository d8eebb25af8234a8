"""The static steps of the wizard, in order, around the role block (roles.py), which
sits between `reuse_previous` and `directive_pick`. A step is asked when it applies
and is unanswered; a rewind resets the state fields it owns to their defaults."""

from __future__ import annotations

import functools
from dataclasses import MISSING
from dataclasses import fields as dataclass_fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import AnswerRefused, OkstraError
from ..runbase import earlier_results, project_tree, resolve_base
from . import ids
from .base import Applies, Build, Step, StepContext, Submit, always, make_prompt, refuse
from .confirm import confirmation, needs_approved_plan
from .prompt import Option, Prompt, PromptMeta, prompt_meta
from .reuse import current_task, reuse_applies, reuse_build, reuse_submit
from .roles import check_complete_team, profile_blockers
from .state import EXISTING_TASK, NEW_TASK, AnsweredStep, WizardState

if TYPE_CHECKING:
    from ..tasks import TaskEntry

# `tasks` and `plans` are imported by the steps that use them: a role step needs neither.

_STATE_FIELDS = {f.name: f for f in dataclass_fields(WizardState)}


def _reset(state: WizardState, *, fields: tuple[str, ...]) -> None:
    """Put `fields` back to their defaults."""
    for name in fields:
        info = _STATE_FIELDS[name]
        value: Any = info.default_factory() if info.default_factory is not MISSING else info.default
        setattr(state, name, value)


def static_step(
    step_id: ids.StepKind,
    applies: Applies,
    build: Build,
    submit: Submit,
    owns: tuple[str, ...] = (),
) -> Step:
    return Step(step_id, step_id, applies, build, submit, functools.partial(_reset, fields=owns))


def _project_file(ctx: StepContext, state: WizardState, raw: str, what: str) -> str:
    """Validate a path typed by a person (exists, a file, inside the project); returns
    it relative to the project root (POSIX separators)."""
    text = raw.strip()
    if not text:
        raise refuse(ctx, "path_empty", what=what)
    root = Path(state.project_root).resolve()
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


def _named_options(ctx: StepContext, kind: str, values: tuple[str, ...]) -> tuple[Option, ...]:
    return tuple(Option(value=v, label=ctx.text.get(f"{kind}.option.{v}")) for v in values)


def _gate_step(step_id: ids.StepKind, go: str, field: str, applies: Applies) -> Step:
    """A `skip`/`go` pick in front of an optional text step that fills `field`; `skip`
    (the default) clears `field`, so an earlier answer does not linger."""

    def build(ctx: StepContext, state: WizardState) -> Prompt:
        options = _named_options(ctx, step_id, (ids.SKIP_ANSWER, go))
        return make_prompt(ctx, state, step_id, "pick", options=options, default=ids.SKIP_ANSWER)

    def submit(_ctx: StepContext, state: WizardState, answer: str, _p: Prompt) -> str:
        if answer == ids.SKIP_ANSWER:
            setattr(state, field, "")
        return ""

    return static_step(step_id, applies, build, submit, (field,))


def _gate_chosen(_ctx: StepContext, state: WizardState, *, gate: str, go: str) -> bool:
    """`applies` of the text step behind a `_gate_step`: its pick was answered `go`."""
    return state.answer_of(gate) == go


def _task_pick_build(ctx: StepContext, state: WizardState) -> Prompt:
    new = ids.NEW_TASK_ANSWER
    options = [Option(value=new, label=ctx.text.get(f"task_pick.option.{new}"))]
    for task in ctx.tasks:
        if task.error is not None:
            label = ctx.text.get("task_pick.option.unreadable", key=task.key)
            options.append(Option(value=task.key, label=label, disabled_reason=task.error))
            continue
        phase, after = task.current_phase, task.pointer.cell()
        label = ctx.text.get(
            "task_pick.option.existing", key=task.key, phase=phase or "--", next=after
        )
        meta = {"phase": phase, "next": after}
        options.append(Option(value=task.key, label=label, meta=meta))
    return make_prompt(ctx, state, ids.TASK_PICK, "pick", options=tuple(options), default=new)


def _task_pick_submit(ctx: StepContext, state: WizardState, answer: str, _p: Prompt) -> str:
    if answer == ids.NEW_TASK_ANSWER:
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
        # Keep the manifest's brief only while it is a file inside the project;
        # otherwise the brief step asks for one.
        try:
            state.brief_path = _project_file(ctx, state, task.brief_path, "brief")
        except AnswerRefused:
            state.brief_path = ""
    return ""


def _segment(ctx: StepContext, answer: str, kind: str) -> str:
    """`answer` as a task group or id segment (refused with why)."""
    from ..tasks import check_segment

    try:
        return check_segment(answer, ctx.text.get(f"{kind}.what"))
    except OkstraError as exc:
        raise AnswerRefused(exc.message) from None


def _task_group_build(ctx: StepContext, state: WizardState) -> Prompt:
    return make_prompt(ctx, state, ids.TASK_GROUP, "text")


def _task_group_submit(ctx: StepContext, state: WizardState, answer: str, _p: Prompt) -> str:
    state.task_group = _segment(ctx, answer, "task_group")
    return state.task_group


def _task_id_build(ctx: StepContext, state: WizardState) -> Prompt:
    values = {"group": state.task_group}
    return make_prompt(ctx, state, ids.TASK_ID, "text", label_values=values)


def _task_id_submit(ctx: StepContext, state: WizardState, answer: str, _p: Prompt) -> str:
    from ..tasks import find_task

    task_id = _segment(ctx, answer, "task_id")
    key = f"{state.task_group}/{task_id}"
    if find_task(Path(state.project_root), key) is not None:
        raise refuse(ctx, "task_exists", key=key)
    state.task_id = task_id
    state.task_key = key
    return task_id


def _brief_applies(_ctx: StepContext, state: WizardState) -> bool:
    return state.task_mode == NEW_TASK or (
        state.task_mode == EXISTING_TASK and not state.brief_path
    )


def _brief_build(ctx: StepContext, state: WizardState) -> Prompt:
    values = {"root": state.project_root}
    return make_prompt(ctx, state, ids.BRIEF, "text", label_values=values)


def _brief_submit(ctx: StepContext, state: WizardState, answer: str, _p: Prompt) -> str:
    state.brief_path = _project_file(ctx, state, answer, ctx.text.get("brief.what"))
    return state.brief_path


def recommended_task_type(ctx: StepContext, state: WizardState) -> str:
    """An existing task's next-phase pointer when `ready` (prepare lowers it to `pending`
    until the phase's run completes), else the first task type."""
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
        key = "recommended" if task_type == recommended else "plain"
        title = profile.title or task_type
        label = ctx.text.get(f"task_type.option.{key}", task_type=task_type, title=title)
        found = blockers.get(task_type)
        reason = None if found is None else found.advice
        options.append(Option(task_type, label, reason, {"summary": profile.summary}))
    default = recommended if blockers.get(recommended) is None else None
    meta: PromptMeta = {"recommended": recommended}
    return make_prompt(
        ctx, state, ids.TASK_TYPE, "pick", options=tuple(options), default=default, meta=meta
    )


def _task_type_submit(_ctx: StepContext, state: WizardState, answer: str, _p: Prompt) -> str:
    state.task_type = answer
    return ""


def _approved_plan_build(ctx: StepContext, state: WizardState) -> Prompt:
    values = {"task_type": state.task_type}
    return make_prompt(ctx, state, ids.APPROVED_PLAN, "text", label_values=values)


def _approved_plan_submit(ctx: StepContext, state: WizardState, answer: str, _p: Prompt) -> str:
    path = _project_file(ctx, state, answer, ctx.text.get("approved_plan.what"))
    from ..plans import check_plan_approval

    try:  # an unapproved plan is refused here, not first by prepare
        check_plan_approval(path, project_root=Path(state.project_root))
    except OkstraError as exc:
        raise AnswerRefused(exc.render()) from None
    state.approved_plan_path = path
    return state.approved_plan_path


def _base_ref_applies(ctx: StepContext, state: WizardState) -> bool:
    """Asked in a phase whose roles write, in a git checkout with a commit."""
    profile = ctx.catalog.profiles.get(state.task_type)
    if profile is None or not any(r.writes for r in profile.roles):
        return False
    tree = project_tree(Path(state.project_root), ctx.environment.env)
    return tree is not None and tree.head is not None


def _task_root(state: WizardState) -> Path:
    from ..tasks import task_root

    return task_root(Path(state.project_root), state.task_group, state.task_id)


def _base_ref_build(ctx: StepContext, state: WizardState) -> Prompt:
    """The commit a run's writers branch from: by default the project's; the task's
    earlier runs with a merged result (`run:<run-id>`) are listed in the help."""
    root = Path(state.project_root)
    env = ctx.environment.env
    tree = project_tree(root, env)
    head = tree.head if tree is not None and tree.head else ""
    branch = tree.branch if tree is not None and tree.branch else ""
    on = ctx.text.get("base_ref.on_branch", branch=branch) if branch else ""
    found = earlier_results(root, _task_root(state), env)
    runs = "".join(
        ctx.text.get("base_ref.earlier", run=r.run_id, commit=r.commit[:12]) for r in found
    )
    values = {"commit": head[:12], "on": on, "runs": runs}
    default = state.run_base or head or None
    return make_prompt(ctx, state, ids.BASE_REF, "text", default=default, label_values=values)


def _base_ref_submit(ctx: StepContext, state: WizardState, answer: str, _p: Prompt) -> str:
    """Any git revision of the project, or `run:<run-id>` (refused: unresolvable)."""
    root = Path(state.project_root)
    try:
        base = resolve_base(root, _task_root(state), answer, ctx.environment.env)
    except OkstraError as exc:
        raise AnswerRefused(exc.message) from None
    state.run_base = base.ref
    return base.ref


def _directive_build(ctx: StepContext, state: WizardState) -> Prompt:
    default = state.directive or None
    return make_prompt(ctx, state, ids.DIRECTIVE, "text", default=default)


def _directive_submit(ctx: StepContext, state: WizardState, answer: str, _p: Prompt) -> str:
    text = answer.strip()
    if not text:
        raise refuse(ctx, "directive_empty")
    state.directive = text
    return text


def _related_pick_applies(ctx: StepContext, state: WizardState) -> bool:
    return bool(_other_tasks(ctx, state))


def _related_build(ctx: StepContext, state: WizardState) -> Prompt:
    keys = [t.key for t in _other_tasks(ctx, state)]
    values = {"tasks": ", ".join(keys)}
    meta: PromptMeta = {"tasks": keys}
    return make_prompt(ctx, state, ids.RELATED_TASKS, "text", label_values=values, meta=meta)


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


def _confirm_build(ctx: StepContext, state: WizardState) -> Prompt:
    answers = (ids.CONFIRM_ANSWER, ids.EDIT_ANSWER, ids.ABORT_ANSWER)
    options = _named_options(ctx, ids.CONFIRM, answers)
    meta: PromptMeta = {"confirmation": confirmation(ctx, state).text}
    return make_prompt(
        ctx, state, ids.CONFIRM, "pick", options=options, default=ids.CONFIRM_ANSWER, meta=meta
    )


def _confirm_submit(ctx: StepContext, state: WizardState, answer: str, _p: Prompt) -> str:
    if answer == ids.CONFIRM_ANSWER:
        check_complete_team(ctx, state)
        state.confirmed = True
    elif answer == ids.EDIT_ANSWER:
        state.confirmed = False
    else:
        state.aborted = True
    return ""


def _edit_target_applies(_ctx: StepContext, state: WizardState) -> bool:
    return state.confirmed is False


def edit_candidates(state: WizardState) -> list[AnsweredStep]:
    """Every answered step in answer order, except confirm/edit themselves."""
    return [e for e in state.answered if e.step not in ids.NOT_REMEMBERED]


def _edit_target_build(ctx: StepContext, state: WizardState) -> Prompt:
    options = tuple(
        Option(
            value=entry.step,
            label=ctx.text.get("edit_target.option", step=entry.step, answer=entry.answer),
            meta={"provenance": entry.provenance},
        )
        for entry in edit_candidates(state)
    )
    return make_prompt(ctx, state, ids.EDIT_TARGET, "pick", options=options)


def _edit_target_submit(_ctx: StepContext, _state: WizardState, answer: str, _p: Prompt) -> str:
    # The engine does the rewind (it needs the whole step list); this names the target.
    return answer


def done_prompt(ctx: StepContext, state: WizardState) -> Prompt:
    key = "done.aborted" if state.aborted else "done.confirmed"
    return Prompt(
        id=ids.DONE,
        kind="done",
        label=ctx.text.get(key),
        echo_template="",
        help=ctx.text.optional("done.help"),
        meta=prompt_meta(
            ids.DONE, {"aborted": state.aborted, "confirmed": state.confirmed is True}
        ),
    )


def _new_task(_ctx: StepContext, state: WizardState) -> bool:
    return state.task_mode == NEW_TASK


# The static steps before the role steps, and after them.
EARLY_STEPS: tuple[Step, ...] = (
    static_step(
        ids.TASK_PICK,
        always,
        _task_pick_build,
        _task_pick_submit,
        ("task_mode", "task_key", "task_group", "task_id", "brief_path"),
    ),
    static_step(
        ids.TASK_GROUP, _new_task, _task_group_build, _task_group_submit, ("task_group", "task_key")
    ),
    static_step(ids.TASK_ID, _new_task, _task_id_build, _task_id_submit, ("task_id", "task_key")),
    static_step(ids.BRIEF, _brief_applies, _brief_build, _brief_submit, ("brief_path",)),
    static_step(ids.TASK_TYPE, always, _task_type_build, _task_type_submit, ("task_type",)),
    static_step(
        ids.APPROVED_PLAN,
        needs_approved_plan,
        _approved_plan_build,
        _approved_plan_submit,
        ("approved_plan_path",),
    ),
    static_step(ids.BASE_REF, _base_ref_applies, _base_ref_build, _base_ref_submit, ("run_base",)),
    static_step(ids.REUSE_PREVIOUS, reuse_applies, reuse_build, reuse_submit),
)
LATE_STEPS: tuple[Step, ...] = (
    _gate_step(ids.DIRECTIVE_PICK, ids.WRITE_ANSWER, "directive", always),
    static_step(
        ids.DIRECTIVE,
        functools.partial(_gate_chosen, gate=ids.DIRECTIVE_PICK, go=ids.WRITE_ANSWER),
        _directive_build,
        _directive_submit,
        ("directive",),
    ),
    _gate_step(
        ids.RELATED_TASKS_PICK, ids.CHOOSE_ANSWER, "related_tasks_raw", _related_pick_applies
    ),
    static_step(
        ids.RELATED_TASKS,
        functools.partial(_gate_chosen, gate=ids.RELATED_TASKS_PICK, go=ids.CHOOSE_ANSWER),
        _related_build,
        _related_submit,
        ("related_tasks_raw",),
    ),
    static_step(ids.CONFIRM, always, _confirm_build, _confirm_submit, ("confirmed", "aborted")),
    static_step(
        ids.EDIT_TARGET,
        _edit_target_applies,
        _edit_target_build,
        _edit_target_submit,
        ("edit_target",),
    ),
)
