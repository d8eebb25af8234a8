"""Late keys and messages: a dialog closes once, a screen that is going shows nothing.

Keys are handled by the screen on top when they were read, and Textual's `dismiss` (like
`pop_screen`) closes whatever screen is on top *now*: a second `y` sent to a dialog
closed the screens under it (ScreenStackError, InvalidStateError). A dialog therefore
closes only while it is still the active screen.
"""

from __future__ import annotations

from typing import Any, TypeVar

from textual.screen import Screen
from textual.widget import Widget

from ..widgets import Plain

T = TypeVar("T")
W = TypeVar("W", bound=Widget)


def close(screen: Screen[T], result: T | None = None) -> None:
    """Dismiss `screen` with `result` — if it is still the screen on top."""
    if screen.is_active:
        screen.dismiss(result)


def pop(screen: Screen[Any]) -> None:
    """Pop `screen` (pushed without a result) — if it is still the screen on top."""
    if screen.is_active:
        screen.app.pop_screen()


def part(screen: Screen[Any], selector: str, kind: type[W]) -> W | None:
    """The widget `selector` of `screen`, or None once the screen is going (a message
    queued before it was replaced arrives while its widgets are being removed)."""
    if gone(screen):
        return None
    return next(screen.query(selector).results(kind), None)


def show_error(screen: Screen[Any], message: str) -> None:
    """Show `message` in the screen's `#error` line (hidden when empty)."""
    error = part(screen, "#error", Plain)
    if error is not None:
        error.update(message)
        error.set_class(bool(message), "-visible")


def gone(screen: Screen[Any]) -> bool:
    """Whether `screen` was replaced or dismissed (its widgets are being removed)."""
    return not screen.is_attached or screen not in screen.app.screen_stack
