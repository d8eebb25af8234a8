"""The `exec` backend's foreground child: okstra stays the parent of the lead CLI.

The CLI gets the terminal the way a shell hands it to a job: it runs in its own process
group, which becomes the terminal's foreground group (so Ctrl-C, Ctrl-Z and window
resizes reach the CLI and not okstra). SIGINT, SIGTERM, SIGHUP and SIGWINCH sent to
okstra itself are passed on to the CLI. When the CLI is stopped (Ctrl-Z), okstra takes
the terminal back and stops too, so the shell's job control works; `fg` continues both.
When the CLI ends, okstra takes the terminal back, restores its modes, and returns
the CLI's exit status (128 + N for a CLI killed by signal N).

Without a controlling terminal (pipes, tests) the CLI simply runs as a child in
okstra's process group, with the same signal forwarding.

Signals go only to okstra's own child, and to the process group it leads, while it is
not yet reaped (so its pid cannot be another process's); never to a pid <= 1 or a
negative one.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import termios
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import FrameType

from okstra_core.errors import LaunchError
from okstra_core.processes.process import as_pid

from ..records import dataclass

FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGWINCH)


@dataclass(frozen=True)
class ChildExit:
    """How the foreground CLI ended."""

    pid: int
    exit_status: int | None  # its exit status, when it exited
    signal: int | None  # the signal that killed it, when one did

    @property
    def code(self) -> int:
        """What okstra exits with: the CLI's status, or 128 + the signal."""
        if self.signal is not None:
            return 128 + self.signal
        return self.exit_status if self.exit_status is not None else 1


def _terminal_fd() -> int | None:
    """stdin's fd when it is the controlling terminal and okstra is in its foreground."""
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return None
    try:
        if not os.isatty(fd) or os.tcgetpgrp(fd) != os.getpgrp():
            return None
    except OSError:
        return None
    return fd


def _give_terminal(fd: int, pgrp: int) -> None:
    # A background process group calling tcsetpgrp gets SIGTTOU unless it ignores it.
    old = signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    try:
        with contextlib.suppress(OSError):
            os.tcsetpgrp(fd, pgrp)
    finally:
        signal.signal(signal.SIGTTOU, old)


def run_child(
    argv: Sequence[str],
    env: Mapping[str, str],
    cwd: Path,
    *,
    on_start: Callable[[int], None] | None = None,
    output: Path | None = None,
) -> ChildExit:
    """Run `argv` as okstra's foreground child until it ends.

    Args:
        argv: the CLI and its arguments (argv[0] a path or a name on env's PATH).
        env: its whole environment.
        cwd: where it runs.
        on_start: called with the child's pid once it runs (okstra records it).
        output: run it without the terminal: standard input empty, its output appended
            to this file (`okstra demo --surface background`).

    Raises:
        LaunchError: the CLI could not be started.
    """
    fd = _terminal_fd() if output is None else None
    saved = None
    if fd is not None:
        with contextlib.suppress(termios.error):
            saved = termios.tcgetattr(fd)

    def in_child() -> None:  # runs in the child between fork and exec
        if fd is not None:
            os.setpgid(0, 0)
            signal.signal(signal.SIGTTOU, signal.SIG_IGN)
            with contextlib.suppress(OSError):
                os.tcsetpgrp(fd, os.getpgrp())
            signal.signal(signal.SIGTTOU, signal.SIG_DFL)

    try:
        with contextlib.ExitStack() as files:
            log = files.enter_context(open(output, "ab")) if output is not None else None
            child = subprocess.Popen(
                list(argv),
                env=dict(env),
                cwd=cwd,
                preexec_fn=in_child if fd is not None else None,
                stdin=subprocess.DEVNULL if log is not None else None,
                stdout=log,
                stderr=log,
            )
    except OSError as exc:
        raise LaunchError(f"`{argv[0]}` could not start: {exc.strerror or exc}") from exc
    pgrp = child.pid if fd is not None else None
    if fd is not None and pgrp is not None:
        with contextlib.suppress(OSError):
            os.setpgid(child.pid, child.pid)  # the same as the child did: no race
        _give_terminal(fd, pgrp)

    reaped: list[bool] = []

    def forward(signum: int, _frame: FrameType | None) -> None:
        if not reaped:
            _signal_child(child.pid, pgrp, signum)

    previous = {sig: signal.signal(sig, forward) for sig in FORWARDED}
    try:
        if on_start is not None:
            on_start(child.pid)
        status = _wait(child.pid, fd, pgrp)
        reaped.append(True)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if fd is not None:
            _give_terminal(fd, os.getpgrp())
            if saved is not None:
                with contextlib.suppress(termios.error):
                    termios.tcsetattr(fd, termios.TCSADRAIN, saved)
    child.returncode = 0  # reaped here: keep Popen from waiting on it again
    if os.WIFSIGNALED(status):
        return ChildExit(pid=child.pid, exit_status=None, signal=os.WTERMSIG(status))
    return ChildExit(pid=child.pid, exit_status=os.WEXITSTATUS(status), signal=None)


def _signal_child(pid: int, pgrp: int | None, signum: int) -> None:
    """Signal okstra's unreaped child, or the group it leads; never a pid <= 1."""
    if as_pid(pid) is None:
        return
    with contextlib.suppress(ProcessLookupError):
        if pgrp is not None and pgrp == pid:
            os.killpg(pgrp, signum)
        else:
            os.kill(pid, signum)


def _wait(pid: int, fd: int | None, pgrp: int | None) -> int:
    """Wait for the child to end, following it through job-control stops."""
    while True:
        _, status = os.waitpid(pid, os.WUNTRACED)
        if not os.WIFSTOPPED(status):
            return status
        if fd is None or pgrp is None:
            continue
        # The CLI was stopped (Ctrl-Z): stop okstra too, so the shell sees the job stop.
        _give_terminal(fd, os.getpgrp())
        os.kill(os.getpid(), signal.SIGSTOP)
        # Continued (`fg`): hand the terminal back and continue the CLI.
        _give_terminal(fd, pgrp)
        _signal_child(pid, pgrp, signal.SIGCONT)
