"""Late keys and messages: a dialog closes once, a screen that is going shows nothing.

Closing a dialog once: a key typed twice must not close the screen under it.

Keys reach the app faster than it handles them, and a key is handled by the screen
that was on top when it was read. A dialog answered by `y` and sent a second `y`
before it has gone gets the second one too — and Textual's `dismiss` (like
`pop_screen`) closes whatever screen is on top *now*: the screen under the dialog,
then the one under that, until the stack is empty (ScreenStackError) or the answer's
future is set twice (InvalidStateError). A dialog therefore closes only while it is
still the active screen.
"""

from __future__ import annotations

from typing import Any, TypeVar

from textual.screen import Screen
from textual.widget import Widget

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
    """The widget `selector` of `screen`, or None once the screen is going.

    A message queued for a screen before it was replaced (a key's Input.Changed, a
    worker's result) can arrive while its widgets are being removed: a handler that
    shows something there looks the widget up with this, and does nothing without it.
    """
    if gone(screen):
        return None
    return next(screen.query(selector).results(kind), None)


def gone(screen: Screen[Any]) -> bool:
    """Whether `screen` was replaced or dismissed: it left the screen stack at once, its
    widgets are being removed (a handler with several of them to update checks this)."""
    return not screen.is_attached or screen not in screen.app.screen_stack
