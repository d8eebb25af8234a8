"""The wizard's session: one wizard driven from its state file, above `okstra_core.compat`.

Public API (see docs/internals.md, "Wizard engine"):

* `Wizard` (`wizard`) — `init`, `open`, `prompt`, `refresh`, `submit`, `rewind`, `back`,
  `replay`, `history`, `answers`, `confirmation`, `outcome`, `progress`, `hold`;
* `list_wizards(environment)` → `WizardSummary` list, newest first;
  `delete_wizard(path)` removes one (v2 only) (`files`); `Wizard.discard_if_unanswered()`
  removes an empty one a front end created;
* `resolve_state_path(value)` — where `--state VALUE` points; `new_state_path`
  (`statefile`: opening, creating and removing a state file, an earlier okstra's file
  converted through `okstra_core.compat`).

The layers: this wing → `okstra_core.compat` → the wizard's steps and state
(`okstra_core.wizard`). The names load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_names

if TYPE_CHECKING:
    from .files import WizardSummary, delete_wizard, list_wizards
    from .statefile import new_state_path, resolve_state_path
    from .wizard import Wizard

__all__ = [
    "Wizard",
    "WizardSummary",
    "delete_wizard",
    "list_wizards",
    "new_state_path",
    "resolve_state_path",
]

_LAZY = {
    "Wizard": ".wizard",
    "WizardSummary": ".files",
    "delete_wizard": ".files",
    "list_wizards": ".files",
    "new_state_path": ".statefile",
    "resolve_state_path": ".statefile",
}

__getattr__ = lazy_names(__name__, _LAZY)
