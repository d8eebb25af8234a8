"""Append-only JSONL logs: whole lines or nothing, damaged lines reported by number."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from ..errors import FileSystemError, os_error
from ..records import dataclass
from .atomic import FileLock, write_all
from .files import MAX_LOG_BYTES, make_private_dirs, open_regular, read_bytes


def _repair_tail(fd: int, size: int) -> int:
    """End a log in a newline before appending (a cut-short line is completed or cut)."""
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return size
    start = size
    while start > 0:
        step = min(64 * 1024, start)
        chunk = os.pread(fd, step, start - step)
        cut = chunk.rfind(b"\n")
        if cut >= 0:
            start = start - step + cut + 1
            break
        start -= step
    tail = os.pread(fd, size - start, start)
    try:
        orjson.loads(tail)
    except orjson.JSONDecodeError:
        os.ftruncate(fd, start)
        return start
    write_all(fd, b"\n")
    return size + 1


def append_line(path: Path, record: Any, *, transient_lock: bool = False) -> None:
    """Append one JSON record as a line to a JSONL log, durably, under a lock, whole or nothing.

    A line cut short earlier is repaired first. Raises `FileSystemError`.
    """
    path = Path(path)
    make_private_dirs(path.parent)
    line = orjson.dumps(record, option=orjson.OPT_SORT_KEYS) + b"\n"
    with FileLock(path, timeout=10.0, transient=transient_lock):
        existed = os.path.lexists(path)
        try:
            fd = open_regular(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, what="log")
        except OSError as exc:
            raise os_error(exc, doing="append to the log", path=path) from None
        try:
            st = os.fstat(fd)
            if st.st_nlink > 1:
                raise FileSystemError(
                    "log has other names (hard links): okstra does not append to it", path=path
                )
            size = _repair_tail(fd, st.st_size)
            try:
                write_all(fd, line)
                os.fsync(fd)
            except OSError:
                # Never leave a partial line behind, nor an empty log this call created.
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, size)
                    if not existed and size == 0:
                        os.unlink(path)
                    os.fsync(fd)
                raise
        except OSError as exc:
            raise os_error(exc, doing="append to the log", path=path) from None
        finally:
            os.close(fd)


@dataclass(frozen=True)
class DamagedLine:
    """A line of a JSONL log that is not one JSON record."""

    path: Path
    line: int
    reason: str

    def render(self) -> str:
        return f"{self.path}:{self.line}: {self.reason}"


@dataclass(frozen=True)
class LogRead:
    """A JSONL log as read: its records and its damaged lines."""

    records: list[Any]
    damaged: list[DamagedLine]


def read_log(path: Path, *, what: str = "log", limit: int = MAX_LOG_BYTES) -> LogRead:
    """Read a JSONL log (absent: empty): every record, and every damaged line by number."""
    path = Path(path)
    if not os.path.lexists(path):
        return LogRead([], [])
    data = read_bytes(path, what=what, error=FileSystemError, follow=False, limit=limit)
    records: list[Any] = []
    damaged: list[DamagedLine] = []
    lines = data.split(b"\n")
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        last = number == len(lines)
        try:
            records.append(orjson.loads(raw))
        except orjson.JSONDecodeError as exc:
            reason = (
                "the last record was cut short (no newline): it is not a whole JSON record"
                if last
                else f"not a JSON record ({exc.msg})"
            )
            damaged.append(DamagedLine(path, number, reason))
    return LogRead(records, damaged)


def read_lines(path: Path) -> Iterator[Any]:
    """The whole records of a JSONL log (`read_log` also reports its damaged lines)."""
    yield from read_log(path).records
