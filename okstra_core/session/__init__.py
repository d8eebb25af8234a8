"""The wizard's session: one wizard driven from its state file, above `okstra_core.compat`.

`Wizard` (`wizard`: the transactions on one state file); `list_wizards`,
`WizardSummary` and `delete_wizard` (`files`); `resolve_state_path` and
`new_state_path` (`statefile`). See docs/internals.md, "Wizard engine". The names load
on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import by_module, lazy_names

if TYPE_CHECKING:
    from .files import WizardSummary as WizardSummary
    from .files import delete_wizard as delete_wizard
    from .files import list_wizards as list_wizards
    from .statefile import new_state_path as new_state_path
    from .statefile import resolve_state_path as resolve_state_path
    from .wizard import Wizard as Wizard

_LAZY = by_module(
    {
        ".wizard": ("Wizard",),
        ".files": ("WizardSummary", "delete_wizard", "list_wizards"),
        ".statefile": ("new_state_path", "resolve_state_path"),
    }
)

__getattr__ = lazy_names(__name__, _LAZY)

__all__ = sorted(_LAZY)
