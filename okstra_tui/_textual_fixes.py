"""Fixes for what the pinned Textual gets wrong: a quarantine, applied by `make_app`.

Each fix replaces one method of a Textual class that crashed the app in a situation the
key-burst test (`tests/security/test_security_keys.py`) reached, or that drew a table's
header at the wrong column widths (the runs screen's snapshot); each is written up in
`docs/textual-fixes.md` (what breaks, a reproduction, the fix), and
`tests/tui/test_tui_textual_fixes.py` checks every reproduction with and without them.
`apply()` installs them only on the Textual version they were written for (`PINNED`):
any other is refused, so that an upgrade re-checks every fix.
"""

from __future__ import annotations

import inspect
from contextlib import suppress
from pathlib import Path
from typing import Any

import textual
from textual import work
from textual.app import App
from textual.await_complete import AwaitComplete
from textual.command import CommandList, CommandPalette
from textual.css.query import NoMatches
from textual.dom import NoScreen
from textual.events import Idle, Mount
from textual.widgets import DataTable, Header, OptionList
from textual.widgets._header import HeaderTitle

from okstra_core.errors import OkstraError

# The Textual release these fixes were written for (pyproject.toml pins the same).
PINNED = "8.2.8"

_move_page = OptionList._move_page
_content_height = OptionList.get_content_height
_watch_list_visible = CommandPalette._watch__list_visible
_watch_show_busy = CommandPalette._watch__show_busy
_palette_dismiss = CommandPalette.dismiss
_open_palette = App.action_command_palette
_gather_commands = inspect.unwrap(CommandPalette._gather_commands)  # the method under @work
_table_on_idle = DataTable._on_idle


def _safe_move_page(self: OptionList, direction: Any) -> None:
    # With no line laid out yet there is no page to move by (KeyError before).
    if (self.highlighted or 0) not in self._index_to_line:
        return
    _move_page(self, direction)


def _safe_content_height(self: OptionList, container: Any, viewport: Any, width: int) -> int:
    # Wrapping at width 0 raised ValueError: measure at a width of one cell at least.
    padding = self.get_component_styles("option-list--option").padding.width
    return _content_height(self, container, viewport, max(width, padding + 1))


def _palette_open(palette: CommandPalette) -> bool:
    """Whether the palette still has its list (a closing one has none: NoMatches)."""
    try:
        palette.query_one(CommandList)
    except NoMatches:
        return False
    return True


def _safe_watch_list_visible(self: CommandPalette) -> None:
    if _palette_open(self):
        _watch_list_visible(self)


async def _safe_watch_show_busy(self: CommandPalette) -> None:
    if _palette_open(self):
        await _watch_show_busy(self)


@work(exclusive=True, group=CommandPalette._GATHER_COMMANDS_GROUP)
async def _safe_gather_commands(self: CommandPalette, search_value: str) -> None:
    if _palette_open(self):
        await _gather_commands(self, search_value)


def _safe_open_palette(self: App[Any]) -> None:
    # A palette closed a moment ago is still registered under its id (DuplicateIds).
    if self._nodes._get_by_id("--command-palette") is None:
        _open_palette(self)


def _safe_palette_dismiss(self: CommandPalette, result: None = None) -> AwaitComplete:
    # A second Escape reaching a palette already popped closed the screen under it.
    if not self.is_active:
        done: AwaitComplete = AwaitComplete.nothing()  # type: ignore[no-untyped-call]
        return done
    return _palette_dismiss(self, result)


def _safe_header_on_mount(self: Header, _: Mount) -> None:
    # A title changing while the screen is switched away: the HeaderTitle is gone.
    async def set_title() -> None:
        with suppress(NoScreen, NoMatches):
            self.query_one(HeaderTitle).update(self.format_title())

    self.watch(self.app, "title", set_title)
    self.watch(self.app, "sub_title", set_title)
    self.watch(self.screen, "title", set_title)
    self.watch(self.screen, "sub_title", set_title)


async def _fitting_table_on_idle(self: DataTable[Any], event: Idle) -> None:
    # Lines painted between a change and this fit are cached under the same update
    # count: when the fit moves a column, count an update so that they are painted again.
    before = [column.get_render_width(self) for column in self.ordered_columns]
    await _table_on_idle(self, event)
    if [column.get_render_width(self) for column in self.ordered_columns] != before:
        self._update_count += 1
        self.refresh()


def installed_version() -> str:
    """The installed Textual's version, from its `dist-info` directory when there is one
    (`importlib.metadata` is slow to import)."""
    here = Path(textual.__file__).resolve().parent.parent
    found = list(here.glob("textual-*.dist-info"))
    if len(found) == 1:
        return found[0].name.removeprefix("textual-").removesuffix(".dist-info")
    from importlib.metadata import version

    return version("textual")


_applied = False


def apply() -> None:
    """Install the fixes, once per process.

    Raises:
        OkstraError: the installed Textual is not the version the fixes were written for.
    """
    global _applied
    if _applied:
        return
    found = installed_version()
    if found != PINNED:
        raise OkstraError(
            f"okstra's fixes for Textual were written for textual {PINNED}, but textual "
            f"{found} is installed: install textual=={PINNED}, or check each fix in "
            "docs/textual-fixes.md against this version and update PINNED in "
            "okstra_tui/_textual_fixes.py"
        )
    OptionList._move_page = _safe_move_page  # type: ignore[method-assign]
    OptionList.get_content_height = _safe_content_height  # type: ignore[method-assign]
    CommandPalette._watch__list_visible = _safe_watch_list_visible  # type: ignore[method-assign]
    CommandPalette._watch__show_busy = _safe_watch_show_busy  # type: ignore[method-assign]
    Header._on_mount = _safe_header_on_mount  # type: ignore[method-assign]
    CommandPalette.dismiss = _safe_palette_dismiss  # type: ignore[method-assign,assignment]
    CommandPalette._gather_commands = _safe_gather_commands  # type: ignore[method-assign]
    App.action_command_palette = _safe_open_palette  # type: ignore[method-assign]
    DataTable._on_idle = _fitting_table_on_idle  # type: ignore[method-assign,assignment]
    _applied = True
