"""The wizard: one state machine behind the terminal app and the JSON protocol.

Rooms, top to bottom (below `okstra_core.compat`; the session that drives them from a
state file is `okstra_core.session`): the step loop (`engine`, `revalidate`, `group`),
the steps (`flow`, `steps`, `roles`, `confirm`, `outcome`) and the state (`state`,
`ids`, `prompt`, `base`, `text`). The names load on first use: asking the
next question never loads the outcome (the typed run request).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import by_module, lazy_names

if TYPE_CHECKING:
    from .confirm import Confirmation as Confirmation
    from .confirm import ConfirmationLine as ConfirmationLine
    from .engine import ReplayResult as ReplayResult
    from .ids import STEP_KINDS as STEP_KINDS
    from .outcome import Outcome as Outcome
    from .prompt import AnswerEntry as AnswerEntry
    from .prompt import HistoryEntry as HistoryEntry
    from .prompt import Option as Option
    from .prompt import Prompt as Prompt
    from .prompt import StepResult as StepResult
    from .state import WizardState as WizardState

_LAZY = by_module(
    {
        ".ids": ("STEP_KINDS",),
        ".prompt": ("AnswerEntry", "HistoryEntry", "Option", "Prompt", "StepResult"),
        ".confirm": ("Confirmation", "ConfirmationLine"),
        ".outcome": ("Outcome",),
        ".engine": ("ReplayResult",),
        ".state": ("WizardState",),
    }
)

__getattr__ = lazy_names(__name__, _LAZY)

__all__ = sorted(_LAZY)
