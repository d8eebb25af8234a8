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
  then do nothing.
* `OptionList.get_content_height` wraps each option to the list's width minus the
  option padding; when the layout gives the list exactly that width (a terminal resized
  down to a few cells, then the app closing), the text is wrapped at width 0 and rich
  raised `ValueError: range() arg 3 must not be zero`. The height is measured at a
  width of at least one cell (nothing is visible at that width either way).
* `Header`'s title watcher queries its `HeaderTitle` child; when the title changes while
  the header's screen is being switched away, the child is already gone and the watcher
  raised `NoMatches` (it only expected `NoScreen`), which ends the app. A header without
  its title has nothing to update: the watcher then does nothing.
"""

from __future__ import annotations

from contextlib import suppress
from pathlib import Path
from typing import Any

import textual
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
    _applied = True
