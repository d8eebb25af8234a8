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

Rooms, top to bottom: the files (`files`: list, delete), the session (`session`: the
`Wizard` and its transactions; `statefile`: opening, creating and removing a state
file), then — below the compatibility wing `okstra_core.compat` — the step loop
(`engine`, `revalidate`), the steps (`flow`, `steps`, `roles`, `confirm`, `outcome`)
and the state (`state`, `ids`, `prompt`, `base`, `context`, `text`).

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
    from .files import WizardSummary, delete_wizard, list_wizards
    from .outcome import Outcome
    from .prompt import STEP_KINDS, AnswerEntry, HistoryEntry, Option, Prompt, StepResult
    from .session import Wizard
    from .state import WizardState
    from .statefile import new_state_path, resolve_state_path

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
    "Wizard": ".session",
    "WizardState": ".state",
    "WizardSummary": ".files",
    "delete_wizard": ".files",
    "list_wizards": ".files",
    "new_state_path": ".statefile",
    "resolve_state_path": ".statefile",
}

__getattr__ = lazy_names(__name__, _LAZY)
