"""Every stylesheet the app uses, read before its first screen: CSS parsed once.

Textual parses its whole stylesheet again each time a source is added to it: a screen
class with a stylesheet of its own shown for the first time, or a widget class with a
`DEFAULT_CSS` mounted for the first time. Walked lazily, a setup added one source at
almost every new screen and parsed the whole stylesheet fifteen times. The app instead
lists the screens' stylesheets in its own `CSS_PATH` and adds the default CSS of the
widget classes its screens mount before the first parse (`preload`); when a widget
registers later, Textual finds its source already there and parses nothing.

The classes below are the ones the setup's screens mount (the parts Textual composes
inside a header, footer, collapsible or progress bar come from the pinned Textual's
modules). `tests/tui/test_tui_perf_guards.py` walks a whole setup and fails if the
stylesheet is parsed after the first screen, so a widget added to a screen without
being listed here is caught.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.css.stylesheet import Stylesheet
from textual.dom import DOMNode
from textual.widget import Widget
from textual.widgets import (
    Button,
    Collapsible,
    Footer,
    Header,
    Input,
    Label,
    OptionList,
    ProgressBar,
    Static,
    TextArea,
)
from textual.widgets._collapsible import CollapsibleTitle
from textual.widgets._footer import FooterKey, FooterLabel, KeyGroup
from textual.widgets._header import HeaderClock, HeaderClockSpace, HeaderIcon, HeaderTitle
from textual.widgets._progress_bar import Bar, ETAStatus, PercentageStatus

# Textual's widgets the setup's screens mount (okstra's own widgets subclass these and
# add no CSS of their own; their screens' rules are in the stylesheets).
WIDGETS: tuple[type[Widget], ...] = (
    Header,
    HeaderIcon,
    HeaderTitle,
    HeaderClockSpace,
    HeaderClock,
    Footer,
    FooterKey,
    FooterLabel,
    KeyGroup,
    Horizontal,
    Vertical,
    VerticalScroll,
    Static,
    Label,
    OptionList,
    Input,
    TextArea,
    Button,
    Collapsible,
    CollapsibleTitle,
    Collapsible.Contents,
    ProgressBar,
    Bar,
    PercentageStatus,
    ETAStatus,
)


def default_css(cls: type[DOMNode]) -> list[tuple[Any, str, int, str]]:
    """The (location, css, tie breaker, scope) sources Textual adds when `cls` registers."""
    # `_get_default_css` reads only `_node_bases`: call it for the class, no instance.
    node: Any = SimpleNamespace(_node_bases=DOMNode._css_bases(cls))
    return DOMNode._get_default_css(node)


def preload(stylesheet: Stylesheet, classes: tuple[type[DOMNode], ...] = WIDGETS) -> None:
    """Add the default CSS of `classes` to `stylesheet` (parsed with the rest, once)."""
    for cls in classes:
        for read_from, css, tie_breaker, scope in default_css(cls):
            stylesheet.add_source(
                css,
                read_from=read_from,
                is_default_css=True,
                tie_breaker=tie_breaker,
                scope=scope,
            )
