"""Advisory locks on okstra's files: `flock` on a sidecar `<name>.lock` holding the pid."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import time
from pathlib import Path
from types import TracebackType

from ..errors import FileSystemError, StateInUseError, os_error
from .files import make_private_dirs, open_regular

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
