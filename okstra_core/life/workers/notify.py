"""Telling a person that a worker ended or the lead waits: tmux, the bell, the desktop.

Best effort, never an error. The text is made inert and tmux's `#` doubled first, so a
label from a run file can neither drive a terminal nor expand a tmux format.
"""

from __future__ import annotations

import contextlib
import os
import subprocess

from ...display import inert
from ...environment import Environment
from ...processes.tmux import TmuxServer

_TIMEOUT = 5.0


def _clients(server: TmuxServer) -> list[str]:
    done = server.run(["list-clients", "-F", "#{client_name}"])
    if done is None or done.returncode != 0:
        return []
    return [line for line in done.stdout.splitlines() if line]


def notify(
    message: str,
    environment: Environment,
    *,
    server: TmuxServer | None = None,
    bell_fd: int | None = None,
) -> list[str]:
    """Send `message` every way available; returns how it was sent (for tests and logs)."""
    text = inert(message)
    sent: list[str] = []
    if server is not None:
        for client in _clients(server):
            done = server.run(["display-message", "-c", client, text.replace("#", "##")])
            if done is not None and done.returncode == 0:
                sent.append(f"tmux:{client}")
    if bell_fd is not None:
        with contextlib.suppress(OSError):
            if os.isatty(bell_fd):
                os.write(bell_fd, b"\a")
                sent.append("bell")
    program = environment.which("notify-send")
    if program is not None:
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            done_send = subprocess.run(
                [program, "--app-name=okstra", "okstra", text],
                env=dict(environment.env),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=_TIMEOUT,
                check=False,
            )
            if done_send.returncode == 0:
                sent.append("notify-send")
    return sent
