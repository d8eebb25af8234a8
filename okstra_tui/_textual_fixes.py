"""Fixes for what the pinned Textual gets wrong, applied once when the app is imported.

Each was found by the random key-burst test (`tests/security/test_security_keys.py`)
and is kept until the pinned Textual no longer needs it.

* `OptionList._move_page` (PageUp/PageDown, also in the command palette) indexes its
  line map before any line is laid out: in a region of zero height or width the map is
  empty and the key raised `KeyError`. With nothing laid out there is no page to move
  by, so the key does nothing.
"""

from __future__ import annotations

from typing import Any

from textual.widgets import OptionList

_move_page = OptionList._move_page


def _safe_move_page(self: OptionList, direction: Any) -> None:
    if (self.highlighted or 0) not in self._index_to_line:
        return
    _move_page(self, direction)


def apply() -> None:
    """Install the fixes (idempotent)."""
    OptionList._move_page = _safe_move_page  # type: ignore[method-assign]


apply()
