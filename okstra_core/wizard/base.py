"""The step protocol: one kind of step for the whole wizard, the per-step context and
the prompt builder.

Every step, static or generated from the profile, is a `Step`; the engine walks the
ordered steps of `flow.steps` and knows no step from another. One `StepContext` (catalog,
text, pool, default scopes, project tasks) lives for one prompt computation or one
submit: availability (a fresh `ModelPool`) and the task list are read once per step,
each on first use.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, cast

from ..environment import Environment
from ..errors import AnswerRefused
from ..paths import user_dirs
from ..records import dataclass
from .ids import StepKind
from .prompt import Option, Prompt, PromptKind, PromptMeta, prompt_meta
from .state import WizardState
from .text import WizardText, choose_language, load_text

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..catalog.models import HostSpec, Profile
    from ..defaults import DefaultScopes
    from ..pool import ModelPool
    from ..tasks import TaskEntry


class StepContext:
    """Everything a step needs besides the state, loaded on first use."""

    def __init__(self, environment: Environment, project_root: Path | None = None) -> None:
        self.environment = environment
        self.project_root = project_root

    @cached_property
    def catalog(self) -> Catalog:
        from ..catalog import load_catalog

        return load_catalog(self.environment)

    @cached_property
    def text(self) -> WizardText:
        env = self.environment.env
        return load_text(
            env, choose_language(env, self.catalog.config.language), cache=user_dirs(env).cache
        )

    @cached_property
    def pool(self) -> ModelPool:
        from ..pool import ModelPool

        return ModelPool.from_catalog(self.catalog, self.environment)

    @cached_property
    def scopes(self) -> DefaultScopes:
        from ..defaults import load_scopes

        return load_scopes(self.project_root, self.catalog, self.environment.env)

    @cached_property
    def tasks(self) -> list[TaskEntry]:
        from ..tasks import list_tasks  # on first use: a role step lists no tasks

        return list_tasks(self.project_root) if self.project_root is not None else []

    def profile(self, task_type: str) -> Profile:
        return self.catalog.profile(task_type)

    def host(self, host_id: str) -> HostSpec:
        return self.catalog.host(host_id)


Applies = Callable[[StepContext, WizardState], bool]
Build = Callable[[StepContext, WizardState], Prompt]
Submit = Callable[[StepContext, WizardState, str, Prompt], str]
Reset = Callable[[WizardState], None]


def no_reset(_state: WizardState) -> None:
    """The `reset` of a step that writes nothing of its own."""


def always(_ctx: StepContext, _state: WizardState) -> bool:
    """`applies` of a step that is always asked."""
    return True


@dataclass(frozen=True)
class Step:
    """One step: when it is asked, its prompt, how an answer changes a working copy of
    the state (raise `AnswerRefused` to refuse; returns what a text step stores), how a
    rewind undoes it, and whether it is a role step (`roleSelectionOrder`)."""

    id: str
    kind: StepKind
    applies: Applies
    build: Build
    submit: Submit
    reset: Reset = no_reset
    role_block: bool = False


def refuse(ctx: StepContext, key: str, /, **values: object) -> AnswerRefused:
    """An `AnswerRefused` whose message comes from the text catalog (`errors.<key>`)."""
    return AnswerRefused(ctx.text.get(f"errors.{key}", **values))


def echo_template(ctx: StepContext, kind: str, /, **values: object) -> str:
    """The echo template of a step kind with `{answer}`/`{label}` kept as placeholders."""
    return ctx.text.get(f"{kind}.echo", answer="{answer}", label="{label}", **values)


def render_echo(template: str, answer: str, label: str) -> str:
    # Plain replacement: answers may contain braces and must not be re-parsed.
    return template.replace("{answer}", answer).replace("{label}", label)


def make_prompt(
    ctx: StepContext,
    state: WizardState,
    step_id: str,
    kind: PromptKind,
    step_kind: StepKind | None = None,
    *,
    options: tuple[Option, ...] = (),
    default: str | None = None,
    label_values: Mapping[str, object] | None = None,
    meta: PromptMeta | None = None,
) -> Prompt:
    """Build a prompt from the catalog's `<step_kind>.label/.help/.echo` (a static step's
    kind is its id); a remembered answer is the default of a text step, or of a pick
    while it is selectable."""
    step_kind = step_kind or cast("StepKind", step_id)
    values = label_values or {}
    remembered = state.remembered_answers.get(step_id)
    if remembered is not None:
        if kind == "text":
            default = remembered
        else:
            chosen = next((o for o in options if o.value == remembered), None)
            if chosen is not None and chosen.selectable:
                default = remembered
    return Prompt(
        id=step_id,
        kind=kind,
        label=ctx.text.get(f"{step_kind}.label", **values),
        options=options,
        default=default,
        echo_template=echo_template(ctx, step_kind, **values),
        help=ctx.text.optional(f"{step_kind}.help", **values),
        meta=prompt_meta(step_kind, meta),
    )


def with_notes(prompt: Prompt, notes: list[str]) -> Prompt:
    """The prompt with `notes` shown first in its help and listed in `meta.notes`."""
    if not notes:
        return prompt
    meta: PromptMeta = {**prompt.meta}
    meta["notes"] = [*prompt.meta.get("notes", []), *notes]
    help_text = "\n".join([*notes, prompt.help] if prompt.help else notes)
    return replace(prompt, meta=meta, help=help_text)
