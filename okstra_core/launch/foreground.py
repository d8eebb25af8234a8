"""The `exec` backend's foreground child: okstra stays the parent of the lead CLI.

Like a shell's job, the CLI runs in its own process group, the terminal's foreground
one (Ctrl-C, Ctrl-Z, resizes reach it); signals sent to okstra are forwarded; a stopped
CLI stops okstra too (`fg` continues both). Without a terminal it runs in okstra's group.
Signals go only to okstra's unreaped child (or the group it leads), never a pid <= 1.
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
    with contextlib.suppress(AttributeError, OSError, ValueError):
        fd = sys.stdin.fileno()
        if os.isatty(fd) and os.tcgetpgrp(fd) == os.getpgrp():
            return fd
    return None


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
    """Run `argv` as okstra's foreground child until it ends (LaunchError: not started).

    `on_start` gets the child's pid; with `output`, it runs without the terminal: stdin
    empty, its output appended to that file (`okstra demo --surface background`).
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
