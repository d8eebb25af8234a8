"""When the app writes a line to the ready file (`ready.py` says what a line holds): once a
screen is ready for keys (shown, focused, painted, armed if guarded), and again when its
focus moves, an answer is refused on it, or prepare ends on it."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.screen import Screen

from .ready import ReadyFile
from .screens.base import PromptScreen
from .screens.dialog import DeleteWizardScreen
from .screens.guard import GuardedScreen
from .screens.launch import LaunchScreen
from .screens.relaunch import RelaunchScreen
from .screens.start import StartScreen

if TYPE_CHECKING:
    from okstra_core.session import Wizard
    from okstra_core.wizard.text import WizardText


def screen_kind(screen: Screen[Any]) -> str:
    """What a line calls a screen: a prompt's step kind, `start`, `launch`, …"""
    if isinstance(screen, PromptScreen):
        return screen.step_kind
    kinds = {
        StartScreen: "start",
        LaunchScreen: "launch",
        DeleteWizardScreen: "delete",
        RelaunchScreen: "relaunch",
    }
    return kinds.get(type(screen), type(screen).__name__)


class ReadyLines:
    """The ready lines of one app (nothing without a ready file); `wizard` gives the
    app's wizard now (a line's revision)."""

    def __init__(
        self,
        app: App[Any],
        file: ReadyFile | None,
        *,
        wizard: Callable[[], Wizard | None],
        text: WizardText,
    ) -> None:
        self.app = app
        self.file = file
        self._wizard = wizard
        self._text = text
        self._screens: weakref.WeakSet[Screen[Any]] = weakref.WeakSet()
        self._last: tuple[object, ...] | None = None  # the last plain line written

    def revision(self, screen: Screen[Any] | None) -> int | None:
        """The revision of the wizard `screen` shows (None: no wizard screen)."""
        wizard = self._wizard()
        if wizard is None or not isinstance(screen, PromptScreen | LaunchScreen):
            return None
        return wizard.state.revision

    def after_refresh(self, screen: Screen[Any], **extra: str) -> None:
        """Write a line for `screen` once it is ready for keys, if it is current then.

        Three hops: the screen's queue (its mount handlers queue a `focus()` on the app),
        the app's (the focus is set), then the screen's next refresh (painted).
        """
        if self.file is None:
            return

        def painted() -> None:
            screen.call_after_refresh(self._write, screen, extra)

        def focused() -> None:
            self.app.call_later(painted)

        screen.call_later(focused)

    def _write(self, screen: Screen[Any], extra: dict[str, str]) -> None:
        ready = self.file
        if ready is None or not screen.is_current:
            return
        if isinstance(screen, GuardedScreen) and screen.awaits_key and not screen.armed:
            return  # keys would be dropped as typed ahead: its line comes when armed
        if screen not in self._screens:
            self._screens.add(screen)
            self.app.watch(screen, "focused", lambda _: self.after_refresh(screen), init=False)
        focused = screen.focused
        fields = {
            "step": screen.prompt.id if isinstance(screen, PromptScreen) else None,
            "revision": self.revision(screen),
            "focus": (focused.id or type(focused).__name__) if focused is not None else None,
        }
        line = (screen_kind(screen), *fields.values())
        if not extra and line == self._last:
            return  # nothing changed for a key sender
        self._last = line
        if not ready.write(screen_kind(screen), **fields, **extra):
            self.file = None
            failed = self._text.get("app.ready_file_failed", path=ready.path, error=ready.broken)
            self.app.notify(failed, severity="warning")
