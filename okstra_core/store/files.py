"""What a file must be before okstra touches it, and okstra's private directories."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
from pathlib import Path

from ..errors import FileSystemError, OkstraError, os_error

TEMP_PREFIX = ".okstra-tmp-"
# State and prompt files may hold briefs and directives: not world-readable.
PRIVATE_MODE = 0o600
PRIVATE_DIR_MODE = 0o700
# Largest JSON/TOML/Markdown document okstra reads (state, manifests, profiles, briefs).
MAX_FILE_BYTES = 8 * 1024 * 1024
# Largest append-only log okstra reads (`runs.jsonl`, a task's `timeline.jsonl`).
MAX_LOG_BYTES = 64 * 1024 * 1024


def mib(limit: int) -> str:
    return f"{limit / (1024 * 1024):g} MiB" if limit >= 1024 * 1024 else f"{limit} bytes"


_KINDS = (
    (stat.S_ISREG, "a regular file"),
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def file_kind(mode: int) -> str:
    """How a file type is named in messages ("a FIFO", "a character device", …)."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def link_target(path: Path, dir_fd: int | None = None) -> str:
    try:
        return os.readlink(path, dir_fd=dir_fd)
    except OSError:
        return "?"


def open_regular(
    path: Path,
    flags: int,
    *,
    mode: int = PRIVATE_MODE,
    follow: bool = False,
    what: str = "file",
    error: type[OkstraError] = FileSystemError,
    dir_fd: int | None = None,
) -> int:
    """Open `path` only if it is a regular file (fstat-checked, never blocking); the fd."""
    how = flags | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY
    if not follow:
        how |= os.O_NOFOLLOW
    try:
        fd = os.open(path, how, mode, dir_fd=dir_fd)
    except OSError as exc:
        try:
            st = os.stat(path, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            raise exc from None
        if stat.S_ISLNK(st.st_mode) and follow and exc.errno == errno.ENOENT:
            raise error(
                f"{what} is a symbolic link to {link_target(Path(path), dir_fd)}, "
                "which does not exist",
                path=path,
            ) from None
        if stat.S_ISLNK(st.st_mode) and not follow:
            raise error(
                f"{what} is a symbolic link (to {link_target(Path(path), dir_fd)}): okstra "
                "does not read or write its files through links",
                path=path,
            ) from None
        if not stat.S_ISREG(st.st_mode) and exc.errno in (errno.ENXIO, errno.EISDIR, errno.ELOOP):
            raise error(
                f"{what} is {file_kind(st.st_mode)}: expected a regular file", path=path
            ) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise error(f"{what} is {file_kind(st.st_mode)}: expected a regular file", path=path)
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    except BaseException:
        os.close(fd)
        raise
    return fd


def check_no_links(root: Path, path: Path, *, what: str | None = None) -> None:
    """Refuse a link, or a file where a directory belongs, below `root` on `path`."""
    root = Path(root)
    path = Path(path)
    try:
        rel = path.relative_to(root)
    except ValueError:
        raise FileSystemError(f"{what or 'the path'} must be inside {root}", path=path) from None
    current = root
    parts = rel.parts
    for i, part in enumerate(parts):
        current = current / part
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise os_error(exc, doing="inspect", path=current) from None
        last = i == len(parts) - 1
        if stat.S_ISLNK(st.st_mode):
            raise FileSystemError(
                f"is a symbolic link (to {link_target(current)}): okstra does not read or "
                f"write its files through links below {root}",
                path=current,
            )
        if not last and not stat.S_ISDIR(st.st_mode):
            raise FileSystemError(f"is {file_kind(st.st_mode)}: expected a directory", path=current)
        if last and not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
            raise FileSystemError(
                f"is {file_kind(st.st_mode)}: expected a regular file", path=current
            )


def make_private_dirs(directory: Path, *, inside: Path | None = None) -> None:
    """Create `directory` and its missing parents, each 0700 (no link below `inside`)."""
    directory = Path(directory)
    if inside is not None:
        check_no_links(inside, directory)
    missing: list[Path] = []
    current = directory
    while not current.is_dir():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for path in reversed(missing):
        try:
            os.mkdir(path, PRIVATE_DIR_MODE)
        except FileExistsError:
            if path.is_dir():
                continue  # created meanwhile by someone else
            raise FileSystemError(
                "cannot create a directory: a file that is not a directory is in the way "
                "(Not a directory (ENOTDIR))",
                path=path,
            ) from None
        except OSError as exc:
            raise os_error(exc, doing="create a directory", path=path) from None
        # mkdir's mode is masked by the umask.
        with contextlib.suppress(OSError):
            os.chmod(path, PRIVATE_DIR_MODE)
