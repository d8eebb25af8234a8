"""Driving the installed `okstra` in a real terminal: a private tmux server.

Shared by the end-to-end tests (`test_tui_e2e_*.py`): start a command in a pane, send
keys, capture the screen and wait for text on it. Not a test module.
"""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from tui_support import FAKE_HELP

SESSION = "e2e"


def terminal_env(home: Path, path: str, **extra: str) -> dict[str, str]:
    """The environment of the terminal: `home` as HOME, `path` as PATH, the fake CLIs'
    help text and call log (`home/fake-cli.log`), a 256-colour UTF-8 terminal."""
    return {
        "PATH": path,
        "HOME": str(home),
        "OKSTRA_HOME": os.environ["OKSTRA_HOME"],
        "FAKE_CLI_HELP": FAKE_HELP,
        "FAKE_CLI_LOG": str(home / "fake-cli.log"),
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        **extra,
    }


def eventually(check: Callable[[], bool], what: str, timeout: float = 15.0) -> None:
    """Poll `check` every 50 ms until it holds."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


class Terminal:
    """A private tmux server (`tmux -L okstra-e2e-<uuid>`) whose first pane runs a command.

    Keys and captures target that pane by id, not the session: a tmux launch opens a new
    window in the session and makes it the current one. okstra in the pane is pointed at
    the same private server (`OKSTRA_TMUX_SOCKET`), never the user's.
    """

    def __init__(self, size: tuple[int, int], env: dict[str, str], cwd: Path) -> None:
        self.socket = f"okstra-e2e-{uuid.uuid4().hex[:12]}"
        self.size = size
        self.env = {**env, "OKSTRA_TMUX_SOCKET": self.socket}
        self.cwd = cwd
        self.pane = ""

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
        self.tmux("respawn-pane", "-k", "-t", self.pane, "-c", str(self.cwd), *command)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", self.pane)

    # Keys reach the app in order through the pty, so a short gap is enough; every
    # step that depends on the app's reaction waits for the screen (`wait`).
    def keys(self, *keys: str) -> None:
        for key in keys:
            self.tmux("send-keys", "-t", self.pane, key)
            time.sleep(0.05)

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", self.pane, "-l", text)
        time.sleep(0.05)

    def wait_for(self, check: Callable[[str], bool], what: str, timeout: float = 30.0) -> str:
        """Capture the screen every 50 ms until `check(screen)` holds; return that screen."""
        deadline = time.monotonic() + timeout
        while True:
            shown = self.screen()
            if check(shown):
                return shown
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; the screen is:\n{shown}")
            time.sleep(0.05)

    def wait(self, *texts: str, timeout: float = 30.0) -> str:
        """Wait until every one of `texts` is on the screen; return that screen."""
        return self.wait_for(lambda shown: all(t in shown for t in texts), repr(texts), timeout)

    def shows(self, text: str, timeout: float) -> bool:
        """Whether `text` comes on the screen within `timeout` seconds."""
        try:
            self.wait(text, timeout=timeout)
        except AssertionError:
            return False
        return True

    def dead(self) -> bool:
        return self.tmux("display-message", "-p", "-t", self.pane, "#{pane_dead}").strip() == "1"

    def close(self) -> None:
        self.tmux("kill-server", check=False)
