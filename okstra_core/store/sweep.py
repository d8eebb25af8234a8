"""Sweeping what dead okstra processes left: temp files and lock sidecars."""

from __future__ import annotations

import fcntl
import os
import stat
import time
from pathlib import Path

from ..errors import OkstraError
from .files import TEMP_PREFIX, open_regular
from .locks import LOCK_MARK, MAX_LOCK_BYTES, lock_target, same_file

# Leftovers younger than this are never swept.
SWEEP_GRACE_SECONDS = 60.0


def _okstra_lock(data: bytes) -> bool:
    """A lock sidecar okstra wrote: a pid line, then `LOCK_MARK` (maybe an old tail)."""
    pid, sep, rest = data.partition(b"\n")
    return bool(sep) and pid.isdigit() and rest.startswith(LOCK_MARK)


def _sweep_entry(path: Path, *, lock: bool, now: float, grace: float) -> bool:
    """Remove one leftover if it is provably orphaned; whether it was removed."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1 or now - st.st_mtime < grace:
        return False
    if lock and (st.st_size > MAX_LOCK_BYTES or os.path.lexists(lock_target(path))):
        return False
    try:
        fd = open_regular(path, os.O_RDONLY, what="leftover")
    except (OSError, OkstraError):
        return False
    try:
        try:
            # A live writer (temp file) or holder (sidecar) has it locked: leave it.
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False
        if lock and (
            not _okstra_lock(os.pread(fd, MAX_LOCK_BYTES + 1, 0))
            or os.path.lexists(lock_target(path))
        ):
            return False
        if not same_file(fd, path):
            return False
        os.unlink(path)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def sweep_leftovers(directory: Path, *, grace: float = SWEEP_GRACE_SECONDS) -> list[Path]:
    """Remove okstra's provably orphaned leftovers in `directory`; what was removed."""
    removed: list[Path] = []
    now = time.time()
    try:
        names = os.listdir(directory)
    except OSError:
        return removed
    for name in names:
        temp = name.startswith(TEMP_PREFIX) and name.endswith(".part")
        lock = not temp and name.endswith(".lock") and len(name) > len(".lock")
        if not (temp or lock):
            continue
        path = Path(directory, name)
        if _sweep_entry(path, lock=lock, now=now, grace=grace):
            removed.append(path)
    return removed


_SWEPT: set[Path] = set()


def sweep_once(directory: Path) -> None:
    if directory in _SWEPT:
        return
    _SWEPT.add(directory)
    sweep_leftovers(directory)
