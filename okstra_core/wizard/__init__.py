"""The wizard: one state machine behind the terminal app and the JSON protocol.

The steps and their state (see docs/internals.md, "Wizard engine"); the session that
drives them from a state file (`Wizard`, listing and deleting state files) is the
wing above the compatibility wing: `okstra_core.session`.

* values: `Prompt`, `Option`, `StepResult`, `HistoryEntry`, `AnswerEntry`,
  `Confirmation`, `ConfirmationLine`, `Outcome`, `ReplayResult`, `WizardState`.

Rooms, top to bottom (all below `okstra_core.compat`, which converts the earlier
okstra's files into this state): the step loop (`engine`, `revalidate`, `group`), the
steps (`flow`, `steps`, `roles`, `confirm`, `outcome`) and the state (`state`, `ids`,
`prompt`, `base`, `context`, `text`).

The names load on first use: importing one of the wizard's modules (the state, the
step ids) loads nothing else, and asking the next question never loads the outcome
(the typed run request).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_names

if TYPE_CHECKING:
    from .confirm import Confirmation, ConfirmationLine
    from .engine import ReplayResult
    from .outcome import Outcome
    from .prompt import STEP_KINDS, AnswerEntry, HistoryEntry, Option, Prompt, StepResult
    from .state import WizardState

__all__ = [
    "STEP_KINDS",
    "AnswerEntry",
    "Confirmation",
    "ConfirmationLine",
    "HistoryEntry",
    "Option",
    "Outcome",
    "Prompt",
    "ReplayResult",
    "StepResult",
    "WizardState",
]

_LAZY = {
    "STEP_KINDS": ".prompt",
    "AnswerEntry": ".prompt",
    "HistoryEntry": ".prompt",
    "Option": ".prompt",
    "Prompt": ".prompt",
    "StepResult": ".prompt",
    "Confirmation": ".confirm",
    "ConfirmationLine": ".confirm",
    "Outcome": ".outcome",
    "ReplayResult": ".engine",
    "WizardState": ".state",
}

__getattr__ = lazy_names(__name__, _LAZY)
