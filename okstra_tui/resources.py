"""Where the app finds its presentation data: `screens/*.tcss` and help text.

In a checkout the stylesheets sit in the top-level `screens/` directory; the wheel
ships the same directory as `okstra_tui/_data/screens` (see pyproject.toml). This is
the one lookup every screen goes through, so neither layout leaks into the screens.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path, PurePath
from typing import TYPE_CHECKING

from okstra_core.environment import Environment
from okstra_core.wizard.text import WizardText, text_for

if TYPE_CHECKING:
    from textual.dom import DOMNode

_PACKAGE = Path(__file__).resolve().parent


@cache
def screens_dir() -> Path:
    """The directory holding the screens' stylesheets and help text."""
    shipped = _PACKAGE / "_data" / "screens"
    if shipped.is_dir():
        return shipped
    return _PACKAGE.parent / "screens"


def stylesheet(name: str) -> Path:
    """The stylesheet of one screen, `screens/<name>.tcss`."""
    return screens_dir() / f"{name}.tcss"


def stylesheets() -> list[str | PurePath]:
    """Every screen's stylesheet, the app's first: what the app parses once, at start.

    Each screen's rules are scoped by its class name, so reading them all up front
    styles every screen as reading each with its first screen did.
    """
    others = sorted(p for p in screens_dir().glob("*.tcss") if p.stem != "app")
    return [stylesheet("app"), *others]


@cache
def help_text(name: str) -> str:
    """The help text of one screen (`screens/<name>.help.md`), empty when it has none.

    Cached: the footer asks on every bindings refresh whether a screen has help.
    """
    path = screens_dir() / f"{name}.help.md"
    try:
        return path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return ""


def ui_text(node: DOMNode) -> WizardText:
    """The text catalog the app loaded once (`OkstraApp.text`), for a mounted screen."""
    text = getattr(node.app, "text", None)
    if not isinstance(text, WizardText):
        # A screen hosted by another App (a test harness): the same choice of language.
        text = text_for(Environment.real())
    return text
