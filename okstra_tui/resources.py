"""Where the app finds `screens/*.tcss` and help text: the top-level `screens/` in a
checkout, `okstra_tui/_data/screens` in the wheel (pyproject.toml). And the app's keys,
as a person expects them on every screen.

`q` quits where it cannot be typed, Ctrl+Q everywhere; `?` (and F1) opens help, which
lists the screen's keys read from its bindings. Where a text box takes `q` and `?`, the
footer shows Ctrl+Q and F1 (Textual's own app bindings hide Ctrl+Q: not inherited).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.binding import Binding

from okstra_core.environment import Environment
from okstra_core.wizard.text import WizardText, text_for

if TYPE_CHECKING:
    from textual.dom import DOMNode
    from textual.screen import Screen

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
    rules are scoped by its class name; the screens name none of their own)."""
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


APP_BINDINGS = (
    Binding("q", "quit", "Quit"),
    Binding("ctrl+q", "quit", "Quit", key_display="Ctrl+Q", priority=True),
    Binding("question_mark", "help", "Help", key_display="?"),
    Binding("f1", "help", "Help", key_display="F1"),
    # Textual's: Ctrl+C says how to quit (and copies where text is selected).
    Binding("ctrl+c", "help_quit", show=False, system=True),
)
# A prompt screen's help panel, on the same two keys.
HELP_PANEL_BINDINGS = (
    Binding("question_mark", "toggle_help", "Help", key_display="?"),
    Binding("f1", "toggle_help", "Help", key_display="F1"),
)


def _spelled(app: App[Any], binding: Binding) -> str:
    shown = App.get_key_display(app, binding)
    if shown.startswith("^") and len(shown) > 1:
        return f"Ctrl+{shown[1:].upper()}"
    return shown


def key_rows(screen: Screen[Any]) -> list[tuple[str, str]]:
    """The keys that act on `screen` now, in footer order: (every key of an action, its
    footer key first; what it does)."""
    app = screen.app
    active_bindings = list(screen.active_bindings.values())
    # The footer's actions and the palette, not the widgets' moves (arrows, paging).
    listed = {a.binding.action for a in active_bindings if a.binding.show}
    listed.add("command_palette")
    rows: dict[str, tuple[list[tuple[bool, str]], str]] = {}
    for active in active_bindings:
        binding = active.binding
        if binding.action not in listed or not binding.description or not active.enabled:
            continue
        keys, _ = rows.setdefault(binding.action, ([], binding.description))
        spelled = _spelled(app, binding)
        if all(spelled != shown for _, shown in keys):
            keys.append((not binding.show, spelled))
    return [
        (" / ".join(k for _, k in sorted(keys, key=lambda k: k[0])), description)
        for keys, description in rows.values()
    ]


def keys_markdown(screen: Screen[Any], title: str) -> str:
    """`key_rows` as a Markdown section (the help panel of a prompt screen)."""
    lines = [f"## {title}", "", "| Key | |", "|---|---|"]
    for keys, description in key_rows(screen):
        lines.append(f"| {_cell(keys)} | {_cell(description)} |")
    return "\n".join(lines)


def _cell(value: str) -> str:
    """A Markdown table cell: its `|`, markup and newlines made literal."""
    escaped = "".join(f"\\{c}" if c in "\\|*_`[]<>#" else c for c in value)
    return escaped.replace("\n", " ")
