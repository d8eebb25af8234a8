"""What the wizard shows and returns: prompts, options, step results, history.

The values both front ends render, as frozen records: the protocol's JSON Schema
(`okstra wizard schema`) comes from them; their protocol data is camelCase.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, NamedTuple

from typing_extensions import TypedDict

from ..records import config, dataclass, field

if TYPE_CHECKING:
    from pydantic import Field, StrictStr

from .ids import StepKind

# `blocked`: no complete team can be formed from here; the prompt says why (help and
# `meta.blocked`) and refuses every answer. `pick_group`: several independent picks at
# once (`questions`) for a host with a multi-question tool (`okstra_core.wizard.engine`).
PromptKind = Literal["pick", "text", "blocked", "done", "pick_group"]


class Progress(NamedTuple):
    """How far a setup is: answered steps of about `total` (written as an object)."""

    answered: int
    total: int


class BlockedMeta(TypedDict):
    """Why no complete team exists: rule lines and advice (what to install/enable)."""

    lines: list[str]
    advice: str


class StaleMeta(TypedDict):
    """An earlier answer that no longer held and was rewound on load."""

    step: str
    answer: str
    reason: str


class PromptMeta(TypedDict, total=False):
    """The facts a prompt carries for rich front ends; every key is optional but `stepKind`.

    Role steps: `role`, `ordinal` (role-model), `duty`, `min`, `max`, `recommended`,
    `description`; `leader_session`: `model`; `reuse_previous`: `run`;
    `related_tasks`: `tasks`; `confirm`: `confirmation`; `done`: `aborted`,
    `confirmed`; `task_type`: `recommended`. `feasibleRecommended` is the count offered
    instead of an infeasible recommended one; `notes` are lines to show with the
    prompt (an unavailable configured default, a recommended count that cannot be
    formed); `blocked` says why no team exists; `stale` names an answer rewound on load.
    """

    stepKind: StepKind
    role: str
    ordinal: int
    duty: str
    min: int
    max: int
    recommended: int | str
    feasibleRecommended: int
    description: str
    model: str
    run: str
    tasks: list[str]
    confirmation: str
    aborted: bool
    confirmed: bool
    notes: list[str]
    blocked: BlockedMeta
    stale: StaleMeta


def prompt_meta(step_kind: StepKind, facts: PromptMeta | None = None) -> PromptMeta:
    """A prompt's meta: its step kind (`Prompt.step_kind` reads it), then `facts`."""
    meta: PromptMeta = {"stepKind": step_kind}
    meta.update(facts or {})
    return meta


@dataclass(frozen=True)
class Option:
    """One choice of a pick prompt.

    Attributes:
        value: the stable identifier submitted as the answer.
        label: translated text for people.
        disabled_reason: why it cannot be chosen now (shown dimmed), or None.
        meta: extra facts for rich front ends (role-model: `display`, `provider`,
            `provenance` when the option is a configured default).
    """

    __pydantic_config__ = config(
        aliases={"disabled_reason": "disabledReason"},
        by_name=True,
        omit_none=("disabled_reason",),
        omit_empty=("meta",),
    )

    value: str
    label: str
    disabled_reason: str | None = None
    meta: dict[str, str] = field(default_factory=dict)

    @property
    def selectable(self) -> bool:
        return self.disabled_reason is None

    @classmethod
    def trusted(
        cls, value: str, label: str, disabled_reason: str | None, meta: dict[str, str]
    ) -> Option:
        """An option from values the engine made itself, without the frozen record's
        per-field `__setattr__` (a role-model prompt on a big pool makes thousands)."""
        option = object.__new__(cls)
        option.__dict__.update(value=value, label=label, disabled_reason=disabled_reason, meta=meta)
        return option


def _step_property(schema: dict[str, Any]) -> None:
    """`step` in the protocol's prompt schema: the same value as `id` (earlier consumers)."""
    properties = schema.setdefault("properties", {})
    properties["step"] = {
        "type": "string",
        "title": "Step",
        "description": "the same as `id` (the earlier protocol's name for it)",
    }


@dataclass(frozen=True)
class Prompt:
    """The question the wizard asks now.

    Attributes:
        id: the step id (`task_pick`, `role-count:analyser`, `role-model:critic:1`, …).
        kind: `pick`, `text`, `blocked` (no complete team: see `meta.blocked`) or `done`.
        label: the question.
        options: the choices of a pick prompt (disabled ones included, with reason).
        default: the pre-selected value (a selectable option, a remembered text), or None.
        echo_template: how the answer is echoed (`{answer}`, `{label}` placeholders).
        help: one or two lines of explanation (may be empty).
        meta: typed facts (`PromptMeta`); always `stepKind` (see `STEP_KINDS`).
        questions: a `pick_group` prompt's questions, each a full prompt (the first is
            the current step, answerable on its own).
    """

    # `step`: the earlier protocol's name of `id`; its consumers read it.
    __pydantic_config__ = config(
        aliases={"echo_template": "echoTemplate"},
        by_name=True,
        json_schema_extra=_step_property,
        views=("step",),
        first=("id", "step"),
        omit_empty=("questions",),
    )

    id: str
    kind: PromptKind
    label: str
    options: tuple[Option, ...] = ()
    default: str | None = None
    echo_template: str = ""
    help: str = ""
    meta: PromptMeta = field(default_factory=PromptMeta)
    # Each a `Prompt` (typed loosely so that the prompt's JSON Schema stays flat).
    questions: tuple[Any, ...] = ()

    @property
    def step(self) -> str:
        """The same as `id` (the earlier protocol's name for it)."""
        return self.id

    @property
    def step_kind(self) -> StepKind:
        return self.meta.get("stepKind", "done")

    @property
    def selectable(self) -> tuple[Option, ...]:
        """The options that can be chosen now."""
        return tuple(o for o in self.options if o.selectable)

    def option(self, value: str) -> Option | None:
        return next((option for option in self.options if option.value == value), None)


@dataclass(frozen=True)
class StepResult:
    """What an accepted answer returns: its echo and the next prompt."""

    __pydantic_config__ = config()

    echo: str
    next: Prompt


@dataclass(frozen=True)
class HistoryEntry:
    """One answered step as the history panel shows it (answer order)."""

    __pydantic_config__ = config(aliases={"step_id": "stepId"}, by_name=True)

    step_id: str
    answer: str
    echo: str
    label: str
    provenance: str


@dataclass(frozen=True)
class AnswerEntry:
    """One line of a replayable answers file: `{"step": id, "answer": value}`."""

    __pydantic_config__ = config()

    step: Annotated[StrictStr, Field(min_length=1)]
    answer: StrictStr
