"""The replies of the wizard protocol's read-only commands (apart from `_replies`, so that
a step does not build them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from ..records import config, dataclass, field

if TYPE_CHECKING:
    from ..session import WizardSummary
    from ..wizard import AnswerEntry, HistoryEntry, Outcome, Prompt
    from ..wizard.confirm import Confirmation
    from ..wizard.prompt import Progress


@dataclass(frozen=True, kw_only=True)
class Shown:
    """`show`: the prompt, confirmation, history and progress of one load."""

    __pydantic_config__ = config(camel_case=True, omit_empty=("notes",))

    ok: Literal[True] = True
    state: str
    source: str
    legacy: bool
    revision: int
    updated_at: str
    prompt: Prompt
    confirmation: Confirmation
    history: tuple[HistoryEntry, ...]
    progress: Progress
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class OutcomeReply:
    """`outcome`: the outcome's own keys after `ok`."""

    __pydantic_config__ = config(spread="outcome", omit_empty=("notes",))

    ok: Literal[True] = True
    outcome: Outcome
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class AnswersReply:
    """`answers`: the replayable answers, in answer order."""

    __pydantic_config__ = config()

    ok: Literal[True] = True
    answers: tuple[AnswerEntry, ...] = field(default=())


@dataclass(frozen=True, kw_only=True)
class WizardsReply:
    """`list`: every resumable wizard, newest first."""

    __pydantic_config__ = config()

    ok: Literal[True] = True
    wizards: tuple[WizardSummary, ...] = field(default=())
