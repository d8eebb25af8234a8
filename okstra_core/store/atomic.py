"""Durable, atomic file writes: a locked temp file, fsynced, renamed over the target."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
from pathlib import Path
from typing import Any

import orjson

from ..errors import FileSystemError, os_error
from .files import PRIVATE_MODE, TEMP_PREFIX, file_kind, link_target, make_private_dirs
from .locks import sweep_once


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _check_replaceable(path: Path) -> None:
    """A file replaced by rename: a regular file or nothing."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise os_error(exc, doing="inspect", path=path) from None
    if stat.S_ISLNK(st.st_mode):
        raise FileSystemError(
            f"is a symbolic link (to {link_target(path)}): okstra does not replace links "
            "with its files",
            path=path,
        )
    if not stat.S_ISREG(st.st_mode):
        raise FileSystemError(f"is {file_kind(st.st_mode)}: expected a regular file", path=path)


def write_all(fd: int, data: bytes) -> None:
    """Write every byte (a short write is continued; no progress is an error)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(errno.EIO, "the write made no progress")
        view = view[written:]


def _mkstemp(directory: Path) -> tuple[int, str]:
    """`tempfile.mkstemp` for okstra's temp names: exclusive, 0600, never a link."""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(100):
        name = os.path.join(directory, f"{TEMP_PREFIX}{os.urandom(6).hex()}.part")
        try:
            return os.open(name, flags, 0o600), name
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no unused temporary file name", str(directory))


def _new_temp(directory: Path, target: Path) -> tuple[int, Path]:
    """A fresh temp file for `target`, created exclusively and locked by us (for the sweep)."""
    while True:
        try:
            fd, tmp_name = _mkstemp(directory)
        except OSError as exc:
            raise os_error(exc, doing="write", path=target) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            mine = os.fstat(fd)
            try:
                named = os.lstat(tmp_name)
            except FileNotFoundError:
                os.close(fd)
                continue
            if (named.st_dev, named.st_ino) != (mine.st_dev, mine.st_ino):
                os.close(fd)
                continue
        except OSError as exc:
            os.close(fd)
            raise os_error(exc, doing="write", path=target) from None
        return fd, Path(tmp_name)


def atomic_write_bytes(
    path: Path,
    data: bytes,
    *,
    mode: int = PRIVATE_MODE,
    durable: bool = True,
    make_parent: bool = True,
) -> None:
    """Write `data` to `path` atomically and (unless `durable` is False) durably."""
    path = Path(path)
    if make_parent:
        make_private_dirs(path.parent)
    _check_replaceable(path)
    fd, tmp = _new_temp(path.parent, path)
    try:
        try:
            write_all(fd, data)
            if durable:
                os.fsync(fd)
            os.fchmod(fd, mode)
            os.replace(tmp, path)
        finally:
            os.close(fd)  # after the rename: the temp file's lock covers the whole write
    except BaseException as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(exc, OSError):
            raise os_error(exc, doing="write", path=path) from None
        raise
    if durable:
        try:
            _fsync_dir(path.parent)
        except OSError as exc:
            raise os_error(exc, doing="write", path=path) from None
    sweep_once(path.parent)


def atomic_write_text(path: Path, text: str, *, mode: int = PRIVATE_MODE) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), mode=mode)


def dumps_json(obj: Any) -> bytes:
    """Canonical pretty JSON (sorted keys, trailing newline) used for every file."""
    return orjson.dumps(obj, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"


def atomic_write_json(path: Path, obj: Any, *, mode: int = PRIVATE_MODE) -> None:
    atomic_write_bytes(path, dumps_json(obj), mode=mode)
