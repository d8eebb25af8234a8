"""What a file must be before okstra touches it, okstra's private directories, and reading
okstra's files: whole, size-capped, and every failure naming the file."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
from pathlib import Path
from types import TracebackType
from typing import Any

import orjson

from ..errors import FileSystemError, OkstraError, describe_os_error, os_error

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


def read_bytes(
    path: Path,
    *,
    what: str = "file",
    error: type[OkstraError] = OkstraError,
    follow: bool = True,
    limit: int = MAX_FILE_BYTES,
    dir_fd: int | None = None,
    shown: Path | None = None,
) -> bytes:
    """Read a whole regular file (no FIFO, no device, at most `limit` bytes), named on failure."""
    path = Path(path)
    named = shown or path
    try:
        fd = open_regular(path, os.O_RDONLY, follow=follow, what=what, error=error, dir_fd=dir_fd)
    except OkstraError as exc:
        if shown is None:
            raise
        raise error(exc.message, path=named) from None
    except FileNotFoundError:
        raise error(f"{what} not found", path=named) from None
    except PermissionError:
        raise error(f"{what} is not readable (permission denied)", path=named) from None
    except OSError as exc:
        raise error(f"{what} cannot be read: {describe_os_error(exc)}", path=named) from None
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            raise error(
                f"{what} is too large ({size} bytes; the limit is {mib(limit)})", path=named
            )
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(1024 * 1024, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise error(f"{what} is too large (the limit is {mib(limit)})", path=named)
    except OSError as exc:
        raise error(f"{what} cannot be read: {describe_os_error(exc)}", path=named) from None
    finally:
        os.close(fd)
    return b"".join(chunks)


def _check_name(name: str, root: Path, error: type[OkstraError]) -> None:
    if not name or name in (".", "..") or "/" in name or "\0" in name:
        raise error(f"not a file name: {name!r}", path=root)


class OpenDirectory:
    """A directory opened by `open_directory`; its files are read by fixed names only."""

    def __init__(self, fd: int, path: Path, error: type[OkstraError]) -> None:
        self.fd = fd
        self.path = path
        self.error = error

    def __enter__(self) -> OpenDirectory:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def exists(self, name: str) -> bool:
        """Whether an entry `name` is there (a link is not followed)."""
        _check_name(name, self.path, self.error)
        try:
            os.stat(name, dir_fd=self.fd, follow_symlinks=False)
        except OSError:
            return False
        return True

    def read(
        self,
        name: str,
        *,
        what: str = "file",
        limit: int = MAX_FILE_BYTES,
        missing_ok: bool = False,
        error: type[OkstraError] | None = None,
    ) -> bytes | None:
        """The whole regular file `name` (no link, ≤ `limit`); None if missing and `missing_ok`."""
        _check_name(name, self.path, self.error)
        if missing_ok and not self.exists(name):
            return None
        return read_bytes(
            Path(name),
            what=what,
            error=error or self.error,
            follow=False,
            limit=limit,
            dir_fd=self.fd,
            shown=self.path / name,
        )

    def tail(self, name: str, size: int) -> tuple[bytes, int] | None:
        """The last `size` bytes of the regular file `name` and their offset; None never waits."""
        _check_name(name, self.path, self.error)
        try:
            fd = open_regular(Path(name), os.O_RDONLY, dir_fd=self.fd, error=self.error)
        except (OSError, OkstraError):
            return None
        try:
            end = os.fstat(fd).st_size
            start = max(0, end - size)
            return os.pread(fd, end - start, start), start
        except OSError:
            return None
        finally:
            os.close(fd)


def open_directory(
    root: Path, *names: str, what: str = "directory", error: type[OkstraError] = OkstraError
) -> OpenDirectory:
    """Open `root/names…` as a directory, never through a link below `root` (close it)."""
    path = Path(root)
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise error(f"{what} cannot be opened: {describe_os_error(exc)}", path=path) from None
    try:
        for name in names:
            _check_name(name, path, error)
            path = path / name
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                if stat.S_ISLNK(st.st_mode):
                    raise error(
                        f"{what} is a symbolic link (to {link_target(Path(name), fd)}): okstra "
                        "does not read a run's files through links",
                        path=path,
                    )
                if not stat.S_ISDIR(st.st_mode):
                    raise error(f"is {file_kind(st.st_mode)}: expected a directory", path=path)
                child = os.open(name, flags | os.O_NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                raise error(f"{what} not found", path=path) from None
            except OSError as exc:
                raise error(
                    f"{what} cannot be opened: {describe_os_error(exc)}", path=path
                ) from None
            os.close(fd)
            fd = child
    except BaseException:
        with contextlib.suppress(OSError):
            os.close(fd)
        raise
    return OpenDirectory(fd, path, error)


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


def read_json(path: Path, *, what: str = "JSON file", follow: bool = True) -> Any:
    """Read and parse a JSON file (`follow=False`: a link is refused), naming it on failure."""
    return parse_json(read_bytes(path, what=what, follow=follow), Path(path), what=what)
