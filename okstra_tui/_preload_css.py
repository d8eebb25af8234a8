"""Every stylesheet the app uses, read before its first screen: CSS parsed once.

Textual parses its whole stylesheet again each time a source is added (a screen or
widget class with CSS of its own, shown first): lazily, a setup parsed it fifteen times.
The app lists every `screens/*.tcss` in its `CSS_PATH` and, before the first parse,
adds the default CSS of every widget and screen class the modules of
`okstra_tui.screens` and `okstra_tui.widgets` define or import (`preloaded`), plus the
parts Textual composes inside its own widgets (`PARTS`); screens off the setup path
with heavy Textual CSS load theirs when they open (`LATE`).
`tests/tui/test_tui_perf_guards.py` fails if the stylesheet is parsed after the first
screen, naming the class whose CSS came late.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from types import ModuleType, SimpleNamespace
from typing import Any

from textual.app import App
from textual.css.stylesheet import Stylesheet
from textual.dom import DOMNode
from textual.widget import Widget
from textual.widgets import Collapsible, Footer, Header, ProgressBar
from textual.widgets._collapsible import CollapsibleTitle
from textual.widgets._footer import FooterKey, FooterLabel, KeyGroup
from textual.widgets._header import HeaderClock, HeaderClockSpace, HeaderIcon, HeaderTitle
from textual.widgets._progress_bar import Bar, ETAStatus, PercentageStatus

PARTS: dict[type[Widget], tuple[type[Widget], ...]] = {
    Header: (HeaderIcon, HeaderTitle, HeaderClockSpace, HeaderClock),
    Footer: (FooterKey, FooterLabel, KeyGroup),
    Collapsible: (CollapsibleTitle, Collapsible.Contents),
    ProgressBar: (Bar, PercentageStatus, ETAStatus),
}

# The runs screen's `DataTable` alone would make the first parse half as long again.
LATE: frozenset[str] = frozenset({"okstra_tui.screens.runs"})


def _widget_classes(module: ModuleType) -> list[type[Widget]]:
    """The widget and screen classes a module defines or imports (defines only, for a
    module in `LATE`)."""
    late = module.__name__ in LATE
    return [
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, Widget)
        and not issubclass(value, App)
        and (not late or value.__module__ == module.__name__)
    ]


@cache
def preloaded() -> tuple[type[DOMNode], ...]:
    """Every class whose default CSS the app reads before its first screen (Textual's
    first, then okstra's, each in a fixed order)."""
    from . import screens, widgets

    found: set[type[Widget]] = set()
    for package in (screens, widgets):
        for info in pkgutil.iter_modules(package.__path__, f"{package.__name__}."):
            found.update(_widget_classes(importlib.import_module(info.name)))
    for cls in list(found):
        for widget, parts in PARTS.items():
            if issubclass(cls, widget):
                found.update(parts)
    return tuple(sorted(found, key=_okstra_last))


def _okstra_last(cls: type) -> tuple[bool, str]:
    return cls.__module__.startswith("okstra_tui"), f"{cls.__module__}.{cls.__qualname__}"


def preload(stylesheet: Stylesheet) -> None:
    """Add the default CSS of `preloaded()` to `stylesheet`, to be parsed with the rest."""
    for cls in preloaded():
        # `_get_default_css` reads only `_node_bases`: call it for the class, no instance.
        node: Any = SimpleNamespace(_node_bases=DOMNode._css_bases(cls))
        for read_from, css, tie_breaker, scope in DOMNode._get_default_css(node):
            stylesheet.add_source(
                css, read_from=read_from, is_default_css=True, tie_breaker=tie_breaker, scope=scope
            )
