"""The key footer, rebuilt only when the keys it shows change.

Textual's `Footer` recomposes at every bindings refresh (four or five times while a
prompt screen appears, with the same keys), most of what showing a screen restyles.
This one compares what it would show with what it shows.
"""

from __future__ import annotations

from typing import Any

from textual.screen import Screen
from textual.widgets import Footer


class KeysFooter(Footer):
    """`Footer` without the rebuilds that would show the same keys again."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._shown: tuple[object, ...] | None = None

    def _keys(self) -> tuple[object, ...]:
        """Everything `Footer.compose` reads."""
        return (
            self.compact,
            self.show_command_palette,
            tuple(
                (key, binding, enabled, tooltip)
                for key, (_node, binding, enabled, tooltip) in self.screen.active_bindings.items()
            ),
        )

    def bindings_changed(self, screen: Screen[Any]) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen:
            self.call_after_refresh(self._recompose_if_changed)

    async def _recompose_if_changed(self) -> None:
        if not self.is_attached:
            return
        keys = self._keys()
        if keys == self._shown:
            return
        self._shown = keys
        await self.recompose()
