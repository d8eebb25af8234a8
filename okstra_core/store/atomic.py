"""Durable, atomic file writes: a locked temp file, fsynced, renamed over the target;
advisory locks on okstra's files (`flock` on a sidecar `<name>.lock` holding the pid),
and the sweep of what dead okstra processes left: temp files and lock sidecars."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import orjson

from ..errors import FileSystemError, OkstraError, StateInUseError, os_error
from .files import (
    PRIVATE_MODE,
    TEMP_PREFIX,
    file_kind,
    link_target,
    make_private_dirs,
    open_regular,
)


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


# A sidecar holds a pid line and the mark: anything larger is not okstra's lock.
MAX_LOCK_BYTES = 64
LOCK_MARK = b"okstra lock\n"


def lock_path_for(path: Path) -> Path:
    path = Path(path)
    return path.with_name(path.name + ".lock")


def lock_target(lock: Path) -> Path:
    """The file a lock sidecar protects (`x.json.lock` -> `x.json`)."""
    return lock.with_name(lock.name[: -len(".lock")])


class FileLock:
    """Advisory exclusive lock on `<path>.lock` (`timeout` 0: fail fast)."""

    def __init__(self, path: Path, *, timeout: float = 0.0, transient: bool = False) -> None:
        self.target = Path(path)
        self.path = lock_path_for(self.target)
        self.timeout = timeout
        self.transient = transient
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock, waiting up to `timeout` (`StateInUseError`, `FileSystemError`)."""
        make_private_dirs(self.path.parent)
        try:
            fd = open_regular(self.path, os.O_RDWR | os.O_CREAT, what="lock file")
        except OSError as exc:
            raise os_error(exc, doing="open the lock file", path=self.path) from None
        try:
            st = os.fstat(fd)
            if st.st_nlink > 1 or st.st_size > MAX_LOCK_BYTES:
                why = "has other names (hard links)" if st.st_nlink > 1 else "is not empty"
                raise FileSystemError(
                    f"lock file {why}: it is not a lock okstra wrote; okstra leaves it alone "
                    "(remove it if it is stale)",
                    path=self.path,
                )
        except BaseException:
            os.close(fd)
            raise
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    os.close(fd)
                    raise os_error(exc, doing="lock", path=self.path) from None
                if time.monotonic() >= deadline:
                    pid = _read_pid(fd)
                    os.close(fd)
                    raise StateInUseError(self.target, pid) from None
                time.sleep(0.01)
                continue
            if same_file(fd, self.path):
                break
            # The sidecar was removed meanwhile: this inode locks nothing. Start over.
            os.close(fd)
            try:
                fd = open_regular(self.path, os.O_RDWR | os.O_CREAT, what="lock file")
            except OSError as exc:
                raise os_error(exc, doing="open the lock file", path=self.path) from None
        # Over whatever an earlier holder wrote (never truncated): readers take line one.
        with contextlib.suppress(OSError):
            os.pwrite(fd, f"{os.getpid()}\n".encode() + LOCK_MARK, 0)
        self._fd = fd

    def release(self) -> None:
        """Let the lock go; a sidecar of a missing target is removed first, while held."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            gone = self.transient or not os.path.lexists(self.target)
            if gone and same_file(fd, self.path):
                with contextlib.suppress(OSError):
                    os.unlink(self.path)
        finally:
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
        raw = os.pread(fd, 32, 0).decode("ascii", "replace").partition("\n")[0].strip()
        return int(raw) if raw else None
    except (OSError, ValueError):
        return None


def same_file(fd: int, path: Path) -> bool:
    """Whether `path` (not followed) still names the open file `fd`."""
    try:
        named = os.lstat(path)
    except OSError:
        return False
    mine = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (mine.st_dev, mine.st_ino)


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
