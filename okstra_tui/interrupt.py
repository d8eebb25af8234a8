"""Ctrl-C at any moment of the app's start: exit 130 and one line, never a traceback.

The `okstra` command replaces the SIGINT handler as its very first act (`__init__.py`):
`okstra: interrupted` and `os._exit(130)` (start-up writes no file). While the app owns
the terminal, `entry.WhileTheAppRuns` makes it exit with 130; after the app, and for a
headless command (which ends its own interrupts), Python's handler is back
(`as_python`). Once the command has said its last word (`said_all`) a SIGINT is held
back: the command's own exit status stands.
"""

from __future__ import annotations

import os
import signal
import sys

# Loaded first of all: it imports only what the interpreter has loaded already.

EXIT_INTERRUPTED = 130
LINE = "okstra: interrupted"


def now(signum: int, frame: object) -> None:
    """The handler: one line, exit 130 at once."""
    try:
        os.write(2, (LINE + "\n").encode())
    finally:
        os._exit(EXIT_INTERRUPTED)


def at_once() -> None:
    """From now on a SIGINT ends the process with 130 and one line (main thread only);
    one blocked by whoever started okstra is delivered now."""
    try:
        signal.signal(signal.SIGINT, now)
    except ValueError:  # not the main thread: not the command's start-up
        return
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def as_python() -> None:
    """Python's own SIGINT handler again (asyncio's runner takes over from it)."""
    try:  # noqa: SIM105 (contextlib is not loaded yet at start-up)
        signal.signal(signal.SIGINT, signal.default_int_handler)
    except ValueError:  # not the main thread
        pass


def said_all() -> None:
    """okstra has said its last word: a SIGINT from now on is blocked (under the default
    action Python's finalization puts back, it would kill the process by the signal)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


def is_the_command() -> bool:
    """Whether this process is the `okstra` command (or `python -m okstra[_tui]`)."""
    name = os.path.basename(sys.argv[0]) if sys.argv else ""
    orig = getattr(sys, "orig_argv", [])
    return name == "okstra" or orig[1:3] in (["-m", "okstra"], ["-m", "okstra_tui"])
