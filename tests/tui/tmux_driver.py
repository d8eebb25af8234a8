"""Driving the installed `okstra` in a real terminal: a private tmux server.

Shared by the end-to-end tests (`test_tui_e2e_*.py`): start a command in a pane, send
keys, capture the screen. Not a test module.

Synchronisation is okstra's own: the app writes a line to its ready file
(`OKSTRA_READY_FILE`, see `okstra_tui/ready_lines.py`) each time it is ready for keys — a
screen shown, focused and painted; an answer refused; the focus moved; prepare ended;
the app exiting. The terminal sends keys only after such a line, and after a key that
leaves the screen (or moves the focus) it waits for the next one before sending more:

* `ready()` waits for the next line and checks it is the one the test expects;
* `press()` / `type()` send keys to the ready screen (they refuse when none is);
* `submit()` sends keys that end with one that answers the screen, then `ready()`.

Keys sent together must reach one widget by one route: Textual handles a printable
key in the focused widget but a bound key (Enter, arrows, Backspace) only after it
bubbled up to the app, so a bound key followed by a typed character can arrive in the
wrong order. Type text first, then bound keys — never a bound key, then text.

The screen (capture-pane) is read only to assert what a ready screen shows; the
painted frame reaches tmux a moment after the line, so `wait()` allows for that.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_support import FAKE_HELP

SESSION = "e2e"
# Generous: the machine running the tests may be loaded many times over.
TIMEOUT = 60.0


def terminal_env(home: Path, path: str, **extra: str) -> dict[str, str]:
    """The environment of the terminal: `home` as HOME, `path` as PATH, the fake CLIs'
    help text and call log (`home/fake-cli.log`), a 256-colour UTF-8 terminal."""
    return {
        "PATH": path,
        "HOME": str(home),
        "OKSTRA_HOME": os.environ["OKSTRA_HOME"],
        # The tests' projects are trusted (tests/conftest.py): launches are not refused.
        "OKSTRA_TRUSTED_DIRECTORIES": os.environ.get("OKSTRA_TRUSTED_DIRECTORIES", ""),
        "FAKE_CLI_HELP": FAKE_HELP,
        "FAKE_CLI_LOG": str(home / "fake-cli.log"),
        # The fake Gemini CLI's cached login (tests/conftest.py): every fake is ready.
        "GEMINI_CLI_HOME": os.environ["GEMINI_CLI_HOME"],
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        **extra,
    }


def eventually(check: Callable[[], bool], what: str, timeout: float = TIMEOUT) -> None:
    """Wait until `check` holds (a process exit, a file another process writes)."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


@dataclass(frozen=True)
class Ready:
    """One line of the ready file."""

    seq: int
    pid: int
    screen: str
    step: str | None
    revision: int | None
    focus: str | None
    error: str | None
    outcome: str | None

    @classmethod
    def parse(cls, line: str) -> Ready:
        data: dict[str, Any] = json.loads(line)
        return cls(
            seq=data["seq"],
            pid=data["pid"],
            screen=data["screen"],
            step=data["step"],
            revision=data["revision"],
            focus=data["focus"],
            error=data.get("error"),
            outcome=data.get("outcome"),
        )


class Terminal:
    """A private tmux server (`tmux -L okstra-e2e-<uuid>`) whose first pane runs a command.

    Keys and captures target that pane by id, not the session: a tmux launch opens a new
    window in the session and makes it the current one. okstra in the pane is pointed at
    the same private server (`OKSTRA_TMUX_SOCKET`), never the user's, and writes its
    ready lines to `ready_file` (read from where the last `ready()` stopped).
    """

    def __init__(self, size: tuple[int, int], env: dict[str, str], cwd: Path) -> None:
        self.socket = f"okstra-e2e-{uuid.uuid4().hex[:12]}"
        self.size = size
        self.ready_file = cwd.parent / f"ready-{self.socket}.jsonl"
        self.env = {
            **env,
            "OKSTRA_TMUX_SOCKET": self.socket,
            "OKSTRA_READY_FILE": str(self.ready_file),
        }
        self.cwd = cwd
        self.pane = ""
        self.last: Ready | None = None  # the last ready line read
        self.armed = False  # a ready line was read since the last submitting key
        self._read = 0  # bytes of the ready file read so far
        self._pid: int | None = None  # okstra's pid, known from its first ready line

    def tmux(self, *args: str, check: bool = True) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=30,
            check=False,
        )
        if check and done.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args)}: {done.stderr}")
        return done.stdout

    def start(self, command: list[str]) -> None:
        width, height = self.size
        self.pane = self.tmux(
            "new-session",
            "-d",
            "-P",
            "-F",
            "#{pane_id}",
            "-s",
            SESSION,
            "-x",
            str(width),
            "-y",
            str(height),
            "-c",
            str(self.cwd),
            *command,
        ).strip()
        # Keep the pane after okstra exits, to read it and to start okstra again in it.
        self.tmux("set-option", "-w", "-t", self.pane, "remain-on-exit", "on")

    def respawn(self, command: list[str]) -> None:
        assert self.dead(), "respawn only a pane whose command has exited"
        self.armed = False
        self._pid = None
        self.tmux("respawn-pane", "-k", "-t", self.pane, "-c", str(self.cwd), *command)

    def pid(self) -> int:
        """The process id of the pane's command (okstra itself: it is exec'd directly)."""
        return int(self.tmux("display-message", "-p", "-t", self.pane, "#{pane_pid}"))

    # -- the ready file ----------------------------------------------------------------

    def _read_line(self) -> str | None:
        """The next whole line of the ready file, if one is there (one line per write)."""
        try:
            with self.ready_file.open("rb") as handle:
                handle.seek(self._read)
                chunk = handle.read()
        except FileNotFoundError:
            return None
        end = chunk.find(b"\n")
        if end < 0:
            return None
        self._read += end + 1
        return chunk[:end].decode("utf-8")

    def _next_line(self, timeout: float) -> str | None:
        deadline = time.monotonic() + timeout
        next_check = time.monotonic() + 1.0
        while True:
            line = self._read_line()
            if line is not None:
                return line
            now = time.monotonic()
            if now > deadline:
                return None
            if now > next_check:
                next_check = now + 1.0
                # Exited without an exit line (a crash): say so now, not at the timeout.
                if self.dead() and (line := self._read_line()) is None:
                    raise AssertionError(f"okstra exited unexpectedly:\n{self.screen()}")
                if line is not None:
                    return line
            time.sleep(0.01)

    def ready(self, timeout: float = TIMEOUT, **expected: Any) -> Ready:
        """Wait for the next ready line and check its fields against `expected`.

        A value in `expected` is compared with ==, or called when it is callable.
        """
        line = self._next_line(timeout)
        if line is None:
            raise AssertionError(
                f"no ready line within {timeout:.0f}s (expected {expected}; the last was "
                f"{self.last}); the screen is:\n{self.screen()}"
            )
        got = Ready.parse(line)
        if self._pid is None:
            self._pid = self.pid()
        assert got.pid == self._pid, f"ready line {got} is not from the pane's okstra"
        for name, want in expected.items():
            value = getattr(got, name)
            if not (want(value) if callable(want) else value == want):
                raise AssertionError(
                    f"ready line {got} does not have {name}={want!r} (previous: {self.last}); "
                    f"the screen is:\n{self.screen()}"
                )
        self.last = got
        self.armed = got.screen != "exit"
        return got

    # -- keys --------------------------------------------------------------------------

    def _send(self, *args: str) -> None:
        if not self.armed:
            raise AssertionError(f"keys {args} sent before okstra signalled ready")
        self.tmux("send-keys", "-t", self.pane, *args)

    def press(self, *keys: str) -> None:
        """Send keys (tmux key names) that stay on the ready screen and its focus."""
        self._send(*keys)

    def type(self, text: str) -> None:
        """Type `text` literally into the focused widget of the ready screen."""
        self._send("-l", text)

    def submit(self, *keys: str, timeout: float = TIMEOUT, **expected: Any) -> Ready:
        """Send `keys`, the last of which leaves the screen, refuses, or moves the focus;
        then wait for the resulting ready line (see `ready`)."""
        self._send(*keys)
        self.armed = False
        return self.ready(timeout, **expected)

    def quit(self, key: str = "q") -> Ready:
        """Press `key` (quit) and wait until okstra has exited."""
        last = self.submit(key, screen="exit")
        eventually(self.dead, "okstra to exit")
        return last

    # -- the screen --------------------------------------------------------------------

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", self.pane)

    def wait_for(self, check: Callable[[str], bool], what: str, timeout: float = TIMEOUT) -> str:
        """Assert what a ready screen shows: capture until `check(screen)` holds (the
        frame reaches tmux shortly after the ready line); return that screen."""
        deadline = time.monotonic() + timeout
        while True:
            shown = self.screen()
            if check(shown):
                return shown
            if time.monotonic() > deadline:
                raise AssertionError(f"the screen does not show {what}; it is:\n{shown}")
            time.sleep(0.02)

    def wait(self, *texts: str, timeout: float = TIMEOUT) -> str:
        """Assert every one of `texts` is shown (see `wait_for`); return that screen."""
        return self.wait_for(lambda shown: all(t in shown for t in texts), repr(texts), timeout)

    def dead(self) -> bool:
        return self.tmux("display-message", "-p", "-t", self.pane, "#{pane_dead}").strip() == "1"

    def close(self) -> None:
        self.tmux("kill-server", check=False)
