"""Which processes okstra acts on: only the ones it started itself.

A recorded pid (a run file may come from any repository) is a claim: okstra signals it or
judges it alive only when it is a pid (1 < pid <= `pid_max`), launch recorded its start
time (the kernel's, field 22 of `/proc/<pid>/stat`; for the foreground lead also its
parent's pid and start time) and the live process still has them. Signals go through a
pidfd opened before the check, so the process checked is the one signalled; a group is
signalled only when its leader is the checked process. A zombie is not alive.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal as signals
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from ..records import dataclass

PID_MAX_FILE = Path("/proc/sys/kernel/pid_max")
# The kernel's upper bound for pid_max on 64-bit Linux (used when /proc does not say).
PID_MAX_FALLBACK = 4194304
_NOT_OURS = "not a process okstra started"


@functools.cache
def pid_max() -> int:
    """The kernel's largest pid, read once per process (a listing checks many)."""
    try:
        value = int(PID_MAX_FILE.read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        return PID_MAX_FALLBACK
    return value if 1 < value <= PID_MAX_FALLBACK else PID_MAX_FALLBACK


def as_pid(value: object) -> int | None:
    """`value` when it can be a pid okstra started (an int, 1 < pid <= pid_max), else None."""
    if not isinstance(value, int) or isinstance(value, bool):
        return None
    return value if 1 < value <= pid_max() else None


def shown(value: object, limit: int = 40) -> str:
    """A recorded value as a message shows it: repr cut to `limit` (a container by kind)."""
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    try:
        text = repr(value)
    except (ValueError, RecursionError):  # an int past int-to-str's digit limit
        return "an integer too long to show"
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class ProcStat:
    """The fields of `/proc/<pid>/stat` okstra reads."""

    pid: int
    parent: int
    start: str
    state: str = ""  # one letter: `R`, `S`, `Z` (a zombie: it has ended), …


def proc_stat(pid: object) -> ProcStat | None:
    """`/proc/<pid>/stat` of a valid pid; None when there is no such process (or no /proc)."""
    checked = as_pid(pid)
    if checked is None:
        return None
    try:
        raw = Path(f"/proc/{checked}/stat").read_bytes()[:4096].decode("ascii", "replace")
    except OSError:
        return None
    # The command name (field 2) may hold spaces and ")": the fields after it start
    # at field 3 (state); field 4 is the parent's pid, field 22 the start time.
    rest = raw.rpartition(")")[2].split()
    if len(rest) < 20 or not rest[1].isdigit() or not rest[19].isdigit():
        return None
    return ProcStat(pid=checked, parent=int(rest[1]), start=rest[19], state=rest[0])


def process_start(pid: object) -> str | None:
    """The kernel's start time of `pid`, to tell it from a later process with its pid."""
    stat = proc_stat(pid)
    return stat.start if stat is not None else None


@dataclass(frozen=True)
class Identity:
    """A process as launch recorded it (unchecked values from a run file); the parent
    counts only `with_parent` (the foreground lead)."""

    pid: object
    start: object
    parent: object = None
    parent_start: object = None
    with_parent: bool = False

    @classmethod
    def of(cls, pid: object, start: object) -> Identity | None:
        """A recorded worker CLI or supervisor; None unless pid and start are well formed."""
        checked = as_pid(pid)
        return cls(checked, start) if checked is not None and _is_start(start) else None

    @classmethod
    def now(cls, pid: int) -> Identity | None:
        """The live process `pid` as it is now (None when it is gone)."""
        start = process_start(pid)
        return cls(pid, start) if start is not None else None

    def alive(self) -> bool:
        """It still runs (a zombie has ended) and is the process recorded."""
        if not check(self).matches:
            return False
        stat = proc_stat(self.pid)
        return stat is not None and stat.state not in ("Z", "X")

    def signal_group(self, signum: int) -> bool:
        """`send_group`: True when the signal was sent."""
        return send_group(self, signum).matches


@dataclass(frozen=True)
class Verdict:
    """What a look found: `match`, `gone` (no such pid) or `refused` (`why`: the record
    is incomplete or the pid is another process)."""

    state: Literal["match", "gone", "refused"]
    why: str = ""

    @property
    def matches(self) -> bool:
        return self.state == "match"


def _refused(pid: object, why: str) -> Verdict:
    return Verdict("refused", f"{_NOT_OURS}: recorded pid {shown(pid)} {why}")


def _is_start(value: object) -> bool:
    return isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 20


def check(identity: Identity) -> Verdict:
    """Whether the live process at the recorded pid is the one launch recorded."""
    pid = as_pid(identity.pid)
    if pid is None:
        return _refused(identity.pid, f"is not a pid (expected 2 … {pid_max()})")
    if not _is_start(identity.start):
        return _refused(pid, "has no start time recorded at launch")
    if identity.with_parent and (
        as_pid(identity.parent) is None or not _is_start(identity.parent_start)
    ):
        return _refused(pid, "has no parent recorded at launch")
    stat = proc_stat(pid)
    if stat is None:
        return Verdict("gone")
    if stat.start != identity.start:
        return _refused(
            pid,
            f"does not match (its start time is {stat.start}, launch recorded {identity.start})",
        )
    if not identity.with_parent:
        return Verdict("match")
    if stat.parent != identity.parent:
        return _refused(
            pid,
            f"does not match (its parent is pid {stat.parent}, launch recorded {identity.parent})",
        )
    parent = proc_stat(stat.parent)
    if parent is None or parent.start != identity.parent_start:
        now = parent.start if parent is not None else "gone"
        return _refused(
            pid,
            f"does not match (its parent's start time is {now}, "
            f"launch recorded {identity.parent_start})",
        )
    return Verdict("match")


@contextlib.contextmanager
def _pidfd(pid: int) -> Iterator[int | None]:
    """A pidfd of `pid` while checking and signalling it (None where the kernel has none)."""
    opener = getattr(os, "pidfd_open", None)
    fd: int | None = None
    if opener is not None:
        with contextlib.suppress(OSError):
            fd = opener(pid)
    try:
        yield fd
    finally:
        if fd is not None:
            os.close(fd)


def send(identity: Identity, sig: int) -> Verdict:
    """Send `sig` to the recorded process if it still is that process (`match`: sent)."""
    pid = as_pid(identity.pid)
    if pid is None:
        return check(identity)
    with _pidfd(pid) as fd:
        verdict = check(identity)
        if not verdict.matches:
            return verdict
        try:
            if fd is not None:
                signals.pidfd_send_signal(fd, sig)
            else:
                os.kill(pid, sig)
        except ProcessLookupError:
            return Verdict("gone")
        except PermissionError:
            return _refused(pid, "may not be signalled by this user")
    return verdict


def send_group(identity: Identity, sig: int) -> Verdict:
    """Send `sig` to the group the recorded process leads, if it still is and leads it."""
    verdict = check(identity)
    pid = as_pid(identity.pid)
    if not verdict.matches or pid is None:
        return verdict
    try:
        if os.getpgid(pid) != pid:
            return _refused(pid, "does not lead its process group")
        os.killpg(pid, sig)
    except ProcessLookupError:
        return Verdict("gone")
    except PermissionError:
        return _refused(pid, "may not be signalled by this user")
    return verdict


def recorded(pid: int, *, with_parent: bool = False) -> Identity:
    """The identity of a live process okstra just started (its start time read now)."""
    parent = os.getpid() if with_parent else None
    return Identity(
        pid=pid,
        start=process_start(pid),
        parent=parent,
        parent_start=process_start(parent) if parent is not None else None,
        with_parent=with_parent,
    )
