"""The wizard protocol's replies, as records (`records.to_data` writes them).

Each command prints one reply: `Moved` (an answer was taken, or none was given: its
echo and the next prompt), `Refused` (the answer was not taken: why, and the prompt
still current), `Shown`, `OutcomeReply`, `AnswersReply`, `WizardsReply`. `notes` (what
converting an earlier okstra's file changed) is written only when there are some.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from ..records import config, dataclass, field

if TYPE_CHECKING:
    from ..wizard import AnswerEntry, HistoryEntry, Outcome, Prompt, WizardSummary
    from ..wizard.confirm import Confirmation
    from ..wizard.prompt import Progress

__all__ = ["AnswersReply", "Moved", "OutcomeReply", "Refused", "Shown", "WizardsReply"]


@dataclass(frozen=True, kw_only=True)
class Moved:
    """`init`, `step`: the echo of the answer taken (None when none was given) and the
    next prompt; `init` names its state file, and `applied` counts replayed answers."""

    __pydantic_config__ = config(omit_none=("state", "applied"), omit_empty=("notes",))

    ok: Literal[True] = True
    state: str | None = None
    applied: int | None = None
    echo: str | None
    next: Prompt
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Refused:
    """`init --answers`, `step`: the answer was refused (exit 0); the state is unchanged."""

    __pydantic_config__ = config(omit_none=("state", "applied"), omit_empty=("notes",))

    ok: Literal[False] = False
    state: str | None = None
    applied: int | None = None
    error: str
    current: Prompt
    notes: tuple[str, ...] = ()


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
