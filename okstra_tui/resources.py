"""Where the app finds `screens/*.tcss` and help text: the top-level `screens/` in a
checkout, `okstra_tui/_data/screens` in the wheel (pyproject.toml)."""

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
    """Every screen's stylesheet, the app's first, parsed once at start (each screen's
    rules are scoped by its class name)."""
    others = sorted(p for p in screens_dir().glob("*.tcss") if p.stem != "app")
    return [stylesheet("app"), *others]


@cache
def help_text(name: str) -> str:
    """The help text of one screen (`screens/<name>.help.md`), empty when it has none."""
    path = screens_dir() / f"{name}.help.md"
    try:
        return path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return ""


def ui_text(node: DOMNode) -> WizardText:
    """The text catalog the app loaded once (`OkstraApp.text`), for a mounted screen."""
    text = getattr(node.app, "text", None)
    if not isinstance(text, WizardText):
        # A screen hosted by another App (a test harness).
        text = text_for(Environment.real())
    return text
