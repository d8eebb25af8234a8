"""Fixes for what the pinned Textual gets wrong: a quarantine, applied by `make_app`.

Each fix replaces one method of a Textual class that crashes the app in a situation
the random key-burst test (`tests/security/test_security_keys.py`) reached. Each is
written up as an upstream bug report in `docs/textual-fixes.md` (what breaks, a minimal
reproduction, the fix); `tests/tui/test_tui_textual_fixes.py` runs every reproduction
there against the pinned Textual, without the fixes (it must still fail, else the fix
is no longer needed) and with them (it must pass).

Nothing is changed when this module is imported: `apply()` installs the fixes, once,
and only on the Textual version they were written for (`PINNED`); any other version is
refused loudly, so that an upgrade of Textual re-checks every fix instead of patching
code the fixes were not written against.

* `OptionList._move_page` (PageUp/PageDown, also in the command palette) indexes its
  line map before any line is laid out: in a region of zero height or width the map is
  empty and the key raised `KeyError`. With nothing laid out there is no page to move
  by, so the key does nothing.
* `CommandPalette._watch__list_visible` / `_watch__show_busy` query the palette's
  children; the palette's search worker can still set those flags while the palette is
  being dismissed, after its children are gone, and the worker failed with `NoMatches`
  (which ends the app). A closing palette has no list to show or hide: the watchers
  then do nothing. The search worker itself (`_gather_commands`) starts by looking up
  the list: a search started as the palette (or the app) closes finds none and ends.
* `OptionList.get_content_height` wraps each option to the list's width minus the
  option padding; when the layout gives the list exactly that width (a terminal resized
  down to a few cells, then the app closing), the text is wrapped at width 0 and rich
  raised `ValueError: range() arg 3 must not be zero`. The height is measured at a
  width of at least one cell (nothing is visible at that width either way).
* `Header`'s title watcher queries its `HeaderTitle` child; when the title changes while
  the header's screen is being switched away, the child is already gone and the watcher
  raised `NoMatches` (it only expected `NoScreen`), which ends the app. A header without
  its title has nothing to update: the watcher then does nothing.
* `CommandPalette` closes itself with `Screen.dismiss`, which pops whatever screen is on
  top *now*. A second Escape or Enter typed before the palette was gone reaches it
  after it was popped, and closed the screen under it — then the one under that, until
  `pop_screen` raised `ScreenStackError`. A palette that is no longer the active screen
  has nothing to close: its `dismiss` then does nothing. (The app's own dialogs close
  through `screens.stale.close`, which checks the same.)
* `App.action_command_palette` opens a palette with the fixed id `--command-palette`
  unless the screen on top is one; a palette closed a moment ago is still registered
  under that id while it is removed, so Ctrl+P, Escape, Ctrl+P in quick succession
  raised `DuplicateIds`. While the closed one is still there, the key does nothing.
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
from textual.events import Mount
from textual.widgets import Header, OptionList
from textual.widgets._header import HeaderTitle

from okstra_core.errors import OkstraError

# The Textual release these fixes were written for and checked against (pyproject.toml
# pins the same).
PINNED = "8.2.8"

_move_page = OptionList._move_page
_content_height = OptionList.get_content_height
_watch_list_visible = CommandPalette._watch__list_visible
_watch_show_busy = CommandPalette._watch__show_busy
_palette_dismiss = CommandPalette.dismiss
_open_palette = App.action_command_palette
_gather_commands = inspect.unwrap(CommandPalette._gather_commands)  # the method under @work


def _safe_move_page(self: OptionList, direction: Any) -> None:
    if (self.highlighted or 0) not in self._index_to_line:
        return
    _move_page(self, direction)


def _safe_content_height(self: OptionList, container: Any, viewport: Any, width: int) -> int:
    padding = self.get_component_styles("option-list--option").padding.width
    return _content_height(self, container, viewport, max(width, padding + 1))


def _palette_open(palette: CommandPalette) -> bool:
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
    # The app's own children are its screens, registered by id (`App.get_child_by_id`
    # looks in the current screen instead).
    if self._nodes._get_by_id("--command-palette") is None:
        _open_palette(self)


def _safe_palette_dismiss(self: CommandPalette, result: None = None) -> AwaitComplete:
    if not self.is_active:
        done: AwaitComplete = AwaitComplete.nothing()  # type: ignore[no-untyped-call]
        return done
    return _palette_dismiss(self, result)


def _safe_header_on_mount(self: Header, _: Mount) -> None:
    async def set_title() -> None:
        with suppress(NoScreen, NoMatches):
            self.query_one(HeaderTitle).update(self.format_title())

    self.watch(self.app, "title", set_title)
    self.watch(self.app, "sub_title", set_title)
    self.watch(self.screen, "title", set_title)
    self.watch(self.screen, "sub_title", set_title)


def installed_version() -> str:
    """The installed Textual's version, from its `dist-info` directory when there is one
    (`importlib.metadata` costs the app's start more than everything else here)."""
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
    _applied = True
