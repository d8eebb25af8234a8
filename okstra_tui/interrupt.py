"""Ctrl-C at any moment of the app's start: exit 130 and one line, never a traceback.

Until the app owns the terminal, Ctrl-C is a SIGINT, and Python turns it into a
`KeyboardInterrupt` wherever the interpreter is — in the middle of importing Textual,
of building a screen, of a module's own top level — whose traceback was printed. So
the `okstra` command replaces the SIGINT handler as its very first act
(`okstra_tui/__init__.py`, when it is the command being run): the handler says
`okstra: interrupted` and ends the process with 130 at once (`os._exit`: nothing is
half-written at that point — the start-up writes no file). Just before the app takes
the terminal, `entry.WhileTheAppRuns` takes over: a SIGINT then asks the app to exit
with 130 (Textual restores the terminal), and the entry point prints the same line.
After the app, Python's own handler is back (`as_python`): a `KeyboardInterrupt`
during the lead's hand-over is the same line and 130. A headless command gets
Python's handler back at once: it ends its own interrupts (130, its locks released).
In the running app, Ctrl-C is a key (Textual's: it says how to quit). Once the
command has said its last word (`said_all`) a SIGINT is held back: the command's own
exit status stands.
"""

from __future__ import annotations

import os
import signal
import sys

# This module loads first of all, where every millisecond is a window: it imports
# only what the interpreter has loaded already.

EXIT_INTERRUPTED = 130
LINE = "okstra: interrupted"


def now(signum: int, frame: object) -> None:
    """The handler: one line, exit 130 at once."""
    try:
        os.write(2, (LINE + "\n").encode())
    finally:
        os._exit(EXIT_INTERRUPTED)


def at_once() -> None:
    """From now on a SIGINT ends the process with 130 and one line (main thread only).

    A SIGINT held back until now (blocked by whoever started okstra, pending) is
    delivered here, to this handler.
    """
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
    """okstra has said its last word: a SIGINT from now on changes nothing (blocked).

    Python's finalization puts the default SIGINT action back, under which a late
    Ctrl-C would kill the finished process by the signal instead of letting it exit
    with its own status. Nothing is left to interrupt, so the signal is held back
    until the process has ended (a child started from here no longer exists).
    """
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


def is_the_command() -> bool:
    """Whether this process is the `okstra` command (or `python -m okstra` / `-m
    okstra_tui`), not a program that imports the package (a test, a tool)."""
    name = os.path.basename(sys.argv[0]) if sys.argv else ""
    orig = getattr(sys, "orig_argv", [])
    return name == "okstra" or orig[1:3] in (["-m", "okstra"], ["-m", "okstra_tui"])
