"""Screens that act on a deliberate key only: keys typed ahead never reach them.

Enter pressed several times before the confirm screen must not launch a run nobody saw.
A guarded screen is armed `ARM_DELAY` seconds after its first paint (its acting widgets
disabled until then), and the app drops every key read from the terminal before that
(`accepts_key`), however late it gets round to it.
"""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual._time import get_time
from textual.message import Message

# Quitting and interrupting lose nothing: they work armed or not.
ALWAYS_ALLOWED = frozenset({"ctrl+c", "ctrl+q"})


class Armed(Message):
    """A guarded screen now accepts keys (its acting widgets are enabled)."""


class GuardedScreen:
    """Mixin for a `Screen`: disarmed until shown and settled, then armed
    (`on_armed_changed` enables what acts)."""

    # Too short to read the screen and press a key; too short to notice as a wait.
    ARM_DELAY: ClassVar[float] = 0.4

    _armed_at: float | None = None

    @property
    def awaits_key(self) -> bool:
        """Whether the screen now waits for a deliberate key (guarded while it does)."""
        return True

    @property
    def armed(self) -> bool:
        """The screen has been shown, has settled, and acts on fresh keys."""
        return self._armed_at is not None

    def accepts_key(self, event: events.Key) -> bool:
        """Whether `event` may act here: pressed after the screen was armed (anything,
        once the screen no longer waits for a deliberate key)."""
        if event.key in ALWAYS_ALLOWED or not self.awaits_key:
            return True
        armed_at = self._armed_at
        return armed_at is not None and event.time >= armed_at

    def _on_mount(self, event: events.Mount) -> None:
        # The delay runs from the first refresh (the screen is on the terminal).
        self.call_after_refresh(self._shown)  # type: ignore[attr-defined]

    def _shown(self) -> None:
        self.set_timer(self.ARM_DELAY, self._arm)  # type: ignore[attr-defined]

    def _arm(self) -> None:
        self._armed_at = get_time()
        self.on_armed_changed(True)
        self.refresh_bindings()  # type: ignore[attr-defined]
        self.post_message(Armed())  # type: ignore[attr-defined]

    def on_armed_changed(self, armed: bool) -> None:
        """Enable or disable the widgets that act (override)."""
