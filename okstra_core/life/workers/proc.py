"""Process identity: a pid okstra recorded is acted on only while it is that process.

A pid alone names whatever process holds the number now; after a restart (or a long
run) it is someone else's. okstra records each process it starts with its kernel
start time (`/proc/<pid>/stat`, field 22) and signals it only while the pid still has
that start time; run files are data, so a recorded pid must also be a plausible one
(above 1, within the kernel's pid range) before okstra looks at it at all.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

from ...records import dataclass

# Linux's pid_max is at most 2**22; anything else in a run file is not a pid of ours.
PID_MAX = 4_194_304


def plausible_pid(value: object) -> int | None:
    """`value` when it can be a pid okstra started (an int in (1, PID_MAX]), else None."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if 1 < value <= PID_MAX else None


def process_start(pid: int) -> str | None:
    """The kernel's start time of `pid` (clock ticks since boot), None when it is gone."""
    if plausible_pid(pid) is None:
        return None
    try:
        raw = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    # Field 22 (starttime); the command name (field 2) may hold spaces and ")".
    rest = raw.rpartition(")")[2].split()
    return rest[19] if len(rest) > 19 else None


def process_state(pid: int) -> str | None:
    """The kernel's one-letter state of `pid` (`R`, `S`, `Z`, …), None when it is gone."""
    if plausible_pid(pid) is None:
        return None
    try:
        raw = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    rest = raw.rpartition(")")[2].split()
    return rest[0] if rest else None


@dataclass(frozen=True)
class Identity:
    """A process as okstra recorded it: its pid and its start time."""

    pid: int
    start: str

    @classmethod
    def of(cls, pid: object, start: object) -> Identity | None:
        """The identity of recorded values, None unless both are plausible."""
        checked = plausible_pid(pid)
        if checked is None or not isinstance(start, str) or not start.isdigit():
            return None
        return cls(checked, start)

    @classmethod
    def now(cls, pid: int) -> Identity | None:
        """The identity of the live process `pid` (None when it is gone)."""
        start = process_start(pid)
        return cls(pid, start) if start is not None else None

    def alive(self) -> bool:
        """The process still runs (a zombie has ended) and is the one recorded."""
        return process_start(self.pid) == self.start and process_state(self.pid) not in (
            "Z",
            "X",
            None,
        )

    def signal_group(self, signum: int) -> bool:
        """Send `signum` to the process group this process leads, if it still is it.

        okstra starts each worker CLI as the leader of its own process group, so the
        group id is the recorded pid. Returns False (nothing sent) when the process is
        gone or is another one now.
        """
        if not self.alive():
            return False
        try:
            if os.getpgid(self.pid) != self.pid:
                return False
            os.killpg(self.pid, signum)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    def signal(self, signum: int) -> bool:
        """Send `signum` to this process only, if it still is the one recorded."""
        if not self.alive():
            return False
        try:
            os.kill(self.pid, signum)
        except (ProcessLookupError, PermissionError):
            return False
        return True


def terminate(identity: Identity) -> None:
    """SIGTERM to the group of `identity` (best effort; nothing when it is gone)."""
    with contextlib.suppress(OSError):
        identity.signal_group(signal.SIGTERM)
