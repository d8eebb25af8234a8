"""Durable, atomic file writes, advisory locks and append-only logs.

Every file okstra writes that matters goes through here:

* `atomic_write_bytes` — temp file in the same directory, flush + fsync, rename over
  the target, fsync the directory. A reader never sees a partial file; a crash at
  any moment leaves either the old or the new content.
* `FileLock` — an advisory `flock` on a sidecar `<name>.lock` file (the target is
  replaced by rename, so its own inode cannot carry the lock). The holder's pid is
  written into the sidecar so a refused caller can say who holds it.
* `append_line` — append-only JSONL under an exclusive lock, fsynced.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

import orjson

from .errors import OkstraError, StateInUseError

TEMP_PREFIX = ".okstra-tmp-"
# State and prompt files may hold briefs and directives: not world-readable.
PRIVATE_MODE = 0o600


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_bytes(path: Path, data: bytes, *, mode: int = PRIVATE_MODE) -> None:
    """Write `data` to `path` atomically and durably."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=".part", dir=path.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as tmp_file:
            tmp_file.write(data)
            tmp_file.flush()
            os.fsync(tmp_file.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    _fsync_dir(path.parent)


def atomic_write_text(path: Path, text: str, *, mode: int = PRIVATE_MODE) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), mode=mode)


def dumps_json(obj: Any) -> bytes:
    """Canonical pretty JSON (sorted keys, trailing newline) used for every file."""
    return orjson.dumps(obj, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"


def atomic_write_json(path: Path, obj: Any, *, mode: int = PRIVATE_MODE) -> None:
    atomic_write_bytes(path, dumps_json(obj), mode=mode)


def read_bytes(path: Path, *, what: str = "file", error: type[OkstraError] = OkstraError) -> bytes:
    """Read a whole file; every failure is an `error` naming the file."""
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise error(f"{what} not found", path=path) from None
    except IsADirectoryError:
        raise error(f"expected a {what}, found a directory", path=path) from None
    except PermissionError:
        raise error(f"{what} is not readable (permission denied)", path=path) from None
    except OSError as exc:
        raise error(f"{what} cannot be read ({exc.strerror})", path=path) from None


def decode_utf8(data: bytes, path: Path, *, error: type[OkstraError] = OkstraError) -> str:
    """Decode a text file's bytes; invalid UTF-8 is an `error` naming the line and byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise error(
            f"not valid UTF-8 (line {line}, byte {exc.start}): expected a UTF-8 text file",
            path=path,
        ) from None


def json_kind(value: Any) -> str:
    """How a JSON value is named in error messages ("an array", "a string ('x')", …)."""
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, int):
        return f"an integer ({value})"
    if isinstance(value, float):
        return f"a number ({value})"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"a string ({shown!r})"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    if value is None:
        return "null"
    return type(value).__name__


def parse_json(
    data: bytes, path: Path, *, what: str = "JSON file", error: type[OkstraError] = OkstraError
) -> Any:
    """Parse a JSON document's bytes; every failure is an `error` naming the file."""
    decode_utf8(data, Path(path), error=error)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        # A document cut short (a crash or a copy stopped midway) says so.
        truncated = data.strip() and exc.pos >= len(data.rstrip())
        hint = " (the file looks truncated)" if truncated else ""
        raise error(
            f"invalid JSON at line {exc.lineno}, column {exc.colno}{hint}: {exc.msg}: "
            f"expected a {what}",
            path=path,
        ) from None


def parse_json_object(
    data: bytes, path: Path, *, what: str = "JSON object", error: type[OkstraError] = OkstraError
) -> dict[str, Any]:
    """`parse_json` for documents that must be a JSON object."""
    value = parse_json(data, path, what=what, error=error)
    if not isinstance(value, dict):
        raise error(f"expected a JSON object, got {json_kind(value)}", path=path)
    return value


def read_json(path: Path, *, what: str = "JSON file") -> Any:
    """Read and parse a JSON file; every failure is an `OkstraError` naming the file."""
    return parse_json(read_bytes(path, what=what), Path(path), what=what)


def lock_path_for(path: Path) -> Path:
    path = Path(path)
    return path.with_name(path.name + ".lock")


class FileLock:
    """Advisory exclusive lock on `<path>.lock`.

    Args:
        path: the file being protected (the sidecar is derived from it).
        timeout: 0 = fail fast with `StateInUseError`; > 0 = wait up to that many
            seconds (used for short critical sections such as run-sequence allocation).
    """

    def __init__(self, path: Path, *, timeout: float = 0.0) -> None:
        self.target = Path(path)
        self.path = lock_path_for(self.target)
        self.timeout = timeout
        self._fd: int | None = None

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, PRIVATE_MODE)
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    os.close(fd)
                    raise
                if time.monotonic() >= deadline:
                    pid = _read_pid(fd)
                    os.close(fd)
                    raise StateInUseError(self.target, pid) from None
                time.sleep(0.01)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def __enter__(self) -> FileLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


def _read_pid(fd: int) -> int | None:
    try:
        raw = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        return int(raw) if raw else None
    except (OSError, ValueError):
        return None


def append_line(path: Path, record: Any) -> None:
    """Append one JSON record as a line to a JSONL log, durably, under a lock."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    line = orjson.dumps(record, option=orjson.OPT_SORT_KEYS) + b"\n"
    with FileLock(path, timeout=10.0):
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, PRIVATE_MODE)
        try:
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)


def read_lines(path: Path) -> Iterator[Any]:
    """Read a JSONL log, skipping a torn last line (a crash mid-append)."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        return
    for raw in data.splitlines():
        if not raw.strip():
            continue
        try:
            yield orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
