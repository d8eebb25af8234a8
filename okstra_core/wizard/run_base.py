"""The `base_ref` step: the commit a run's writers branch from.

Asked in a phase whose roles write, in a project that is a git checkout with a commit.
A text answer: the default is the commit the project is on (its label shows the short
commit and the branch); any git revision of the project is accepted, or `run:<run-id>`
— an earlier run's merged result, the task's runs that have one are listed in the help.
A revision git cannot resolve is refused, the state unchanged. The answer becomes the
request's `base_ref` (`renderArgs` `base-ref`, `--base-ref=` in `renderArgv`).
"""

from __future__ import annotations

from pathlib import Path

from ..errors import AnswerRefused, OkstraError
from ..gitrepo import project_tree
from ..runbase import earlier_results, resolve_base
from .base import Step, make_prompt
from .context import StepContext
from .ids import BASE_REF
from .prompt import Prompt
from .state import WizardState

__all__ = ["BASE_REF_STEP", "writes"]


def writes(ctx: StepContext, state: WizardState) -> bool:
    """Whether a role of the chosen phase writes."""
    profile = ctx.catalog.profiles.get(state.task_type)
    return profile is not None and any(r.writes for r in profile.roles)


def _applies(ctx: StepContext, state: WizardState) -> bool:
    if not writes(ctx, state):
        return False
    tree = project_tree(Path(state.project_root), ctx.environment.env)
    return tree is not None and tree.head is not None


def _task_root(state: WizardState) -> Path:
    # `tasks` is imported by the steps about the task only (a role step reads none).
    from ..tasks import task_root

    return task_root(Path(state.project_root), state.task_group, state.task_id)


def _build(ctx: StepContext, state: WizardState) -> Prompt:
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
    return make_prompt(
        ctx,
        state,
        BASE_REF,
        "text",
        BASE_REF,
        default=state.run_base or head or None,
        label_values={"commit": head[:12], "on": on, "runs": runs},
    )


def _submit(ctx: StepContext, state: WizardState, answer: str, _p: Prompt) -> str:
    try:
        base = resolve_base(
            Path(state.project_root), _task_root(state), answer, ctx.environment.env
        )
    except OkstraError as exc:
        raise AnswerRefused(exc.message) from None
    state.run_base = base.ref
    return base.ref


def _reset(state: WizardState) -> None:
    state.run_base = ""


BASE_REF_STEP = Step(BASE_REF, BASE_REF, _applies, _build, _submit, _reset)
