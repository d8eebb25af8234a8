"""Screens that act on a deliberate key only: keys typed ahead never reach them.

A person who presses Enter several times on the screens before the confirm screen
must not launch a run they never saw. A guarded screen starts *disarmed*: it is
armed `ARM_DELAY` seconds after its first paint, and until then its acting widgets
are disabled. Every key event carries the time it was read from the terminal; the
app drops a key read before the screen was armed (`GuardedScreen.accepts_key`), so
keys queued while the app was busy, and keys pressed in the moment after the screen
appeared, do nothing — however late the app gets round to them.
"""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual._time import get_time
from textual.message import Message

# Keys that always work, armed or not: quitting and interrupting lose nothing.
ALWAYS_ALLOWED = frozenset({"ctrl+c", "ctrl+q"})


class Armed(Message):
    """A guarded screen now accepts keys (its acting widgets are enabled)."""


class GuardedScreen:
    """Mixin for a `Screen`: disarmed until shown and settled, then armed.

    Subclasses override `on_armed_changed(armed)` to enable what acts (buttons,
    bindings); `armed` tells whether a deliberate key may act now.
    """

    # Long enough that nobody can read the screen and press a key before it ends;
    # short enough not to be noticed as a wait.
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
        """Whether `event` may act here: pressed after the screen was armed.

        A screen that no longer waits for a deliberate key (a launch screen whose
        prepare already runs) guards nothing: its keys (quit, scroll) act at once.
        """
        if event.key in ALWAYS_ALLOWED or not self.awaits_key:
            return True
        armed_at = self._armed_at
        return armed_at is not None and event.time >= armed_at

    def _on_mount(self, event: events.Mount) -> None:
        # After the first refresh the screen is on the terminal; the delay runs from then.
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
