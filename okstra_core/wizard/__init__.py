"""The wizard: one state machine behind the terminal app and the JSON protocol.

Public API (see docs/internals.md, "Wizard engine"):

* `Wizard` — `init`, `open`, `prompt`, `refresh`, `submit`, `rewind`, `back`,
  `replay`, `history`, `answers`, `confirmation`, `outcome`, `progress`, `hold`;
* `list_wizards(environment)` → `WizardSummary` list, newest first;
  `delete_wizard(path)` removes one (v2 only); `Wizard.discard_if_unanswered()`
  removes an empty one a front end created;
* values: `Prompt`, `Option`, `StepResult`, `HistoryEntry`, `AnswerEntry`,
  `Confirmation`, `ConfirmationLine`, `Outcome`, `ReplayResult`;
* `resolve_state_path(value)` — where `--state VALUE` points.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .confirm import Confirmation, ConfirmationLine
from .engine import (
    ReplayResult,
    Wizard,
    WizardSummary,
    delete_wizard,
    list_wizards,
    new_state_path,
    resolve_state_path,
)
from .prompt import STEP_KINDS, AnswerEntry, HistoryEntry, Option, Prompt, StepResult
from .state import WizardState

if TYPE_CHECKING:
    from .outcome import Outcome

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
    "Wizard",
    "WizardState",
    "WizardSummary",
    "delete_wizard",
    "list_wizards",
    "new_state_path",
    "resolve_state_path",
]


def __getattr__(name: str) -> Any:
    # `Outcome` holds the typed run request: imported on first use, so that asking the
    # next question never loads the request, the plans reader or the setup-runs file.
    if name == "Outcome":
        from .outcome import Outcome

        return Outcome
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
