"""The ready file: one JSON line each time the app is ready for keys (docs/protocol.md).

With `OKSTRA_READY_FILE` naming a file, the app appends a line (one `write`, append
mode) when a screen became current, focused and painted (a guarded screen once armed),
an answer was refused on it, its focus moved, prepare ended on the launch screen, and
on exit. A driver sends keys only after a line, so a key reaches the screen it means.

    {"seq": 3, "pid": 4242, "screen": "task_group", "step": "task_group",
     "revision": 2, "focus": "answer"}

* `seq`: 1, 2, 3 … per process; `pid`: the app's process id;
* `screen`: `start`, `launch`, `delete`, `relaunch`, `exit`, or the prompt's step kind
  (`meta["stepKind"]`: `task_pick`, `brief`, `role_model`, `confirm`, …); any other
  screen (the command palette) by its class name;
* `step`: the prompt's step id, or null;
* `revision`: the revision of the wizard state file shown (saved before the line is
  written), or null on the start screen; on exit, the last screen's;
* `focus`: the focused widget's id (its class name if it has no id), or null;
* `error`: only after a refused answer, the message shown;
* `outcome`: only on the launch screen once prepare ended, `prepared` or `failed`.

A line that would repeat the previous one (no error or outcome) is not written. Unset,
nothing is written; a file that cannot be written turns the signal off (one warning).

`ReadyLines` decides when a line is written: once a screen is ready for keys (shown,
focused, painted, armed if guarded), and again when its focus moves, an answer is
refused on it, or prepare ends on it.
"""

from __future__ import annotations

import json
import os
import weakref
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.screen import Screen

from .resources import ui_text
from .screens.base import GuardedScreen, PromptScreen
from .screens.dialog import DeleteWizardScreen, RelaunchScreen
from .screens.launch import LaunchScreen
from .screens.start import StartScreen

if TYPE_CHECKING:
    from okstra_core.session import Wizard


ENV_VAR = "OKSTRA_READY_FILE"


class ReadyFile:
    """Appends the ready lines of one app process to `path`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.seq = 0
        self.broken: OSError | None = None
        self.revision: object = None  # of the last line written

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> ReadyFile | None:
        """The ready file `OKSTRA_READY_FILE` names, or None when it is unset or empty."""
        value = env.get(ENV_VAR)
        return cls(Path(value)) if value else None

    def write(self, screen: str, **fields: object) -> bool:
        """Append one line (`seq`, `pid`, `screen`, then `fields`); False once broken."""
        if self.broken is not None:
            return False
        self.seq += 1
        record = {"seq": self.seq, "pid": os.getpid(), "screen": screen, **fields}
        self.revision = record.get("revision")
        line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, line)
            finally:
                os.close(fd)
        except OSError as exc:
            self.broken = exc
            return False
        return True

    def write_exit(self) -> bool:
        """The last line of the process: the revision is the last screen's."""
        return self.write("exit", step=None, revision=self.revision, focus=None)


def screen_kind(screen: Screen[Any]) -> str:
    """What a line calls a screen: a prompt's step kind, `start`, `launch`, …"""
    if isinstance(screen, PromptScreen):
        return screen.step_kind
    kinds = {
        StartScreen: "start",
        LaunchScreen: "launch",
        DeleteWizardScreen: "delete",
        RelaunchScreen: "relaunch",
    }
    return kinds.get(type(screen), type(screen).__name__)


class ReadyLines:
    """The ready lines of one app (nothing without a ready file); `wizard` gives the
    app's wizard now (a line's revision)."""

    def __init__(
        self, app: App[Any], file: ReadyFile | None, wizard: Callable[[], Wizard | None]
    ) -> None:
        self.app = app
        self.file = file
        self._wizard = wizard
        self._screens: weakref.WeakSet[Screen[Any]] = weakref.WeakSet()
        self._last: tuple[object, ...] | None = None  # the last plain line written

    def after_refresh(self, screen: Screen[Any], **extra: str) -> None:
        """Write a line for `screen` once it is ready for keys, if it is current then.

        Three hops: the screen's queue (its mount handlers queue a `focus()` on the app),
        the app's (the focus is set), then the screen's next refresh (painted).
        """
        if self.file is None:
            return

        def painted() -> None:
            screen.call_after_refresh(self._write, screen, extra)

        def focused() -> None:
            self.app.call_later(painted)

        screen.call_later(focused)

    def _write(self, screen: Screen[Any], extra: dict[str, str]) -> None:
        ready = self.file
        if ready is None or not screen.is_current:
            return
        if isinstance(screen, GuardedScreen) and screen.awaits_key and not screen.armed:
            return  # keys would be dropped as typed ahead: its line comes when armed
        if screen not in self._screens:
            self._screens.add(screen)
            self.app.watch(screen, "focused", lambda _: self.after_refresh(screen), init=False)
        # The revision of the wizard a prompt or launch screen shows.
        wizard = self._wizard() if isinstance(screen, PromptScreen | LaunchScreen) else None
        focused = screen.focused
        fields = {
            "step": screen.prompt.id if isinstance(screen, PromptScreen) else None,
            "revision": wizard.state.revision if wizard is not None else None,
            "focus": (focused.id or type(focused).__name__) if focused is not None else None,
        }
        line = (screen_kind(screen), *fields.values())
        if not extra and line == self._last:
            return  # nothing changed for a key sender
        self._last = line
        if not ready.write(screen_kind(screen), **fields, **extra):
            self.file = None
            failed = ui_text(self.app).get(
                "app.ready_file_failed", path=ready.path, error=ready.broken
            )
            self.app.notify(failed, severity="warning")
