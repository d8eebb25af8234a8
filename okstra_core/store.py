"""Durable, atomic file writes, advisory locks and append-only logs — of okstra's files only.

Every file okstra writes that matters goes through here:

* `atomic_write_bytes` — temp file in the same directory, flush + fsync, rename over
  the target, fsync the directory. A reader never sees a partial file; a crash at
  any moment leaves either the old or the new content.
* `FileLock` — an advisory `flock` on a sidecar `<name>.lock` file (the target is
  replaced by rename, so its own inode cannot carry the lock). The holder's pid is
  written into the sidecar so a refused caller can say who holds it.
* `append_line` — append-only JSONL under an exclusive lock, fsynced, whole or nothing.

and every file okstra reads goes through `read_bytes` / `read_log`.

What a file must be before okstra touches it (a cloned repository may hold anything):

* Opened in place (locks, logs) — never through a symbolic link (`O_NOFOLLOW`), a
  regular file checked with `fstat` after the open (never a FIFO, device or socket),
  never truncated (a lock sidecar is written at offset 0, a log only appended to).
* Replaced by rename (state, run files) — the target, when present, is a regular file
  or nothing; the temp file is created exclusively (`O_EXCL`, which does not follow links).
* Read — a regular file (opened `O_NONBLOCK`, so a FIFO cannot hang the read), no
  larger than a limit named in the error.
* Directories okstra creates are 0700 whatever the umask; `check_no_links` refuses a
  symbolic link anywhere below a root okstra owns (`<project>/.okstra`).

Operating-system errors (disk full, read-only file system, permission denied, name too
long, …) surface as `FileSystemError` naming the file and the errno.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import orjson

from .errors import FileSystemError, OkstraError, StateInUseError, describe_os_error, os_error

TEMP_PREFIX = ".okstra-tmp-"
# State and prompt files may hold briefs and directives: not world-readable.
PRIVATE_MODE = 0o600
# Directories okstra creates (state, data, `.okstra` and below): private whatever the umask.
PRIVATE_DIR_MODE = 0o700
# Largest JSON/TOML/Markdown document okstra reads (state, manifests, profiles, briefs).
MAX_FILE_BYTES = 8 * 1024 * 1024
# Largest append-only log okstra reads (`runs.jsonl`, a task's `timeline.jsonl`).
MAX_LOG_BYTES = 64 * 1024 * 1024
# A lock sidecar only ever holds a pid line: anything larger is not okstra's lock.
MAX_LOCK_BYTES = 64
# The second line of every lock sidecar okstra writes: what marks a leftover one as its own.
LOCK_MARK = b"okstra lock\n"
# Leftovers (temp files of killed writers, lock sidecars of dead holders) younger than
# this are never swept, whatever else proves them orphaned.
SWEEP_GRACE_SECONDS = 60.0


def _mib(limit: int) -> str:
    return f"{limit / (1024 * 1024):g} MiB" if limit >= 1024 * 1024 else f"{limit} bytes"


def file_kind(mode: int) -> str:
    """How a file type is named in messages ("a FIFO", "a character device", …)."""
    if stat.S_ISREG(mode):
        return "a regular file"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _link_target(path: Path) -> str:
    try:
        return os.readlink(path)
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
) -> int:
    """Open `path` only if it is a regular file; return the descriptor (close-on-exec).

    The open never blocks (`O_NONBLOCK`: a FIFO opens at once and is then refused) and,
    unless `follow`, never goes through a symbolic link in the last component
    (`O_NOFOLLOW`). The type is checked with `fstat` on the opened descriptor, so a
    file swapped in between cannot slip through.

    Raises:
        error: a symbolic link (when not `follow`), a FIFO, device, socket or directory.
        OSError: anything else (the file is missing, permission denied, …): callers map it.
    """
    how = flags | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY
    if not follow:
        how |= os.O_NOFOLLOW
    try:
        fd = os.open(path, how, mode)
    except OSError as exc:
        try:
            st = os.lstat(path)
        except OSError:
            raise exc from None
        if stat.S_ISLNK(st.st_mode) and follow and exc.errno == errno.ENOENT:
            raise error(
                f"{what} is a symbolic link to {_link_target(Path(path))}, which does not exist",
                path=path,
            ) from None
        if stat.S_ISLNK(st.st_mode) and not follow:
            raise error(
                f"{what} is a symbolic link (to {_link_target(Path(path))}): okstra does not "
                "read or write its files through links",
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
    """Refuse a symbolic link, or a file where a directory belongs, below `root` on `path`.

    `root` itself (and everything above it) is not judged: the person chose it. Every
    component from `root`'s child down to `path` itself that exists must not be a
    symbolic link; every one but the last must be a directory, and the last, when it
    exists, a directory or a regular file. Nothing needs to exist.

    Raises:
        FileSystemError: naming the offending component and what it is.
    """
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
                f"is a symbolic link (to {_link_target(current)}): okstra does not read or "
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
    """Create `directory` and its missing parents, each 0700 whatever the umask.

    Existing directories are left as they are. With `inside`, nothing below that root
    may be a symbolic link (`check_no_links`).

    Raises:
        FileSystemError: a component is not a directory, a link below `inside`, or the
            file system refused (read-only, permission denied, name too long, …).
    """
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
        # The mode given to mkdir is masked by the umask; set it exactly.
        with contextlib.suppress(OSError):
            os.chmod(path, PRIVATE_DIR_MODE)


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _check_replaceable(path: Path) -> None:
    """A file replaced by rename: a regular file or nothing (never a link, FIFO, device)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise os_error(exc, doing="inspect", path=path) from None
    if stat.S_ISLNK(st.st_mode):
        raise FileSystemError(
            f"is a symbolic link (to {_link_target(path)}): okstra does not replace links "
            "with its files",
            path=path,
        )
    if not stat.S_ISREG(st.st_mode):
        raise FileSystemError(f"is {file_kind(st.st_mode)}: expected a regular file", path=path)


def _write_all(fd: int, data: bytes) -> None:
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
    """A fresh temp file for `target`, created exclusively and locked (`flock`) by us.

    The lock, held until the file is renamed over its target (or removed), is what tells
    `sweep_leftovers` that a live writer still owns the file. A sweeper that removed the
    file between its creation and our lock is noticed (the name no longer leads to our
    file) and another temp file is made.
    """
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
    path: Path, data: bytes, *, mode: int = PRIVATE_MODE, durable: bool = True
) -> None:
    """Write `data` to `path` atomically and (unless `durable` is False) durably.

    `durable=False` skips both fsyncs (the file's and its directory's): for caches,
    where losing a write in a crash costs a recomputation, never data.

    The first write of a process into a directory also sweeps that directory's
    leftovers of dead okstra processes (`sweep_leftovers`).

    Raises:
        FileSystemError: `path` is a link or not a regular file; the parent cannot be
            created; the file system refused the write (disk full, read-only, …).
    """
    path = Path(path)
    make_private_dirs(path.parent)
    _check_replaceable(path)
    fd, tmp = _new_temp(path.parent, path)
    try:
        try:
            _write_all(fd, data)
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
    _sweep_once(path.parent)


def atomic_write_text(path: Path, text: str, *, mode: int = PRIVATE_MODE) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), mode=mode)


def dumps_json(obj: Any) -> bytes:
    """Canonical pretty JSON (sorted keys, trailing newline) used for every file."""
    return orjson.dumps(obj, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"


def atomic_write_json(path: Path, obj: Any, *, mode: int = PRIVATE_MODE) -> None:
    atomic_write_bytes(path, dumps_json(obj), mode=mode)


def read_bytes(
    path: Path,
    *,
    what: str = "file",
    error: type[OkstraError] = OkstraError,
    follow: bool = True,
    limit: int = MAX_FILE_BYTES,
) -> bytes:
    """Read a whole regular file; every failure is an `error` naming the file.

    Never blocks on a FIFO, never reads a device, never more than `limit` bytes.

    Args:
        path: the file.
        what: what the file is, for messages.
        error: the `OkstraError` subclass raised.
        follow: go through a symbolic link in the last component; False for okstra's
            own files (under `.okstra`), which are never links.
        limit: the largest size accepted (named in the error).
    """
    path = Path(path)
    try:
        fd = open_regular(path, os.O_RDONLY, follow=follow, what=what, error=error)
    except FileNotFoundError:
        raise error(f"{what} not found", path=path) from None
    except PermissionError:
        raise error(f"{what} is not readable (permission denied)", path=path) from None
    except OSError as exc:
        raise error(f"{what} cannot be read: {describe_os_error(exc)}", path=path) from None
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            raise error(
                f"{what} is too large ({size} bytes; the limit is {_mib(limit)})", path=path
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
                raise error(f"{what} is too large (the limit is {_mib(limit)})", path=path)
    except OSError as exc:
        raise error(f"{what} cannot be read: {describe_os_error(exc)}", path=path) from None
    finally:
        os.close(fd)
    return b"".join(chunks)


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


def read_json(path: Path, *, what: str = "JSON file", follow: bool = True) -> Any:
    """Read and parse a JSON file; every failure is an `OkstraError` naming the file.

    `follow=False` for okstra's own files: a symbolic link there is refused.
    """
    return parse_json(read_bytes(path, what=what, follow=follow), Path(path), what=what)


def lock_path_for(path: Path) -> Path:
    path = Path(path)
    return path.with_name(path.name + ".lock")


def lock_target(lock: Path) -> Path:
    """The file a lock sidecar protects (`x.json.lock` -> `x.json`)."""
    return lock.with_name(lock.name[: -len(".lock")])


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
        """Take the lock (waiting up to `timeout`).

        The sidecar is opened in place, never through a link, never truncated: it must
        be a regular file with one name, holding at most a pid line.

        Raises:
            StateInUseError: another process holds it (after `timeout`).
            FileSystemError: the sidecar is unsafe, or the file system refused.
        """
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
            if _same_file(fd, self.path):
                break
            # The holder we waited for removed the sidecar (its target was gone) or a
            # sweep did: this inode locks nothing any more. Start over on the name.
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
        """Let the lock go; a sidecar whose target does not exist is removed first.

        A failed operation (nothing written) or a removed file leaves no `.lock` behind.
        The sidecar is removed while still held, and only if its name still leads to
        the locked inode; a process waiting on the removed inode notices and starts over.
        """
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            if not os.path.lexists(self.target) and _same_file(fd, self.path):
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


def _same_file(fd: int, path: Path) -> bool:
    """Whether `path` (not followed) still names the open file `fd`."""
    try:
        named = os.lstat(path)
    except OSError:
        return False
    mine = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (mine.st_dev, mine.st_ino)


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
        if not _same_file(fd, path):
            return False
        os.unlink(path)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def sweep_leftovers(directory: Path, *, grace: float = SWEEP_GRACE_SECONDS) -> list[Path]:
    """Remove what dead okstra processes left in `directory`; return what was removed.

    Only two kinds of file, both okstra's own, are ever removed, and only when all holds:

    * a temp file `.okstra-tmp-*.part` (a writer killed between creating it and the
      rename), or a lock sidecar `<name>.lock` that okstra wrote (a pid line and the
      okstra mark) whose `<name>` does not exist (a holder killed before it wrote);
    * a regular file with one name, never a link (`lstat`, then `O_NOFOLLOW`);
    * last modified more than `grace` seconds ago;
    * nobody holds it: an exclusive `flock` is taken without waiting (a live writer
      locks its temp file until the rename, a live holder its sidecar) and the name
      still leads to the locked file when it is removed.

    Errors (a read-only file system, a vanished file) only leave files in place.
    """
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


# Directories this process already swept (one sweep per directory per process).
_SWEPT: set[Path] = set()


def _sweep_once(directory: Path) -> None:
    if directory in _SWEPT:
        return
    _SWEPT.add(directory)
    sweep_leftovers(directory)


def _repair_tail(fd: int, size: int) -> int:
    """Make a log end in a newline before appending; return its (new) size.

    A last line without its newline is a record cut short (a crash or a full disk
    during an earlier append): if it still parses it only lost its newline, which is
    added; otherwise the partial line is cut off, so no record is ever glued onto it.
    """
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
    _write_all(fd, b"\n")
    return size + 1


def append_line(path: Path, record: Any) -> None:
    """Append one JSON record as a line to a JSONL log, durably, under a lock.

    Whole or nothing: a short write is continued; a write that cannot complete (disk
    full, file too large) is cut back to the previous size before the error is raised,
    and a log whose last line was cut short earlier is repaired first (`_repair_tail`).

    Raises:
        FileSystemError: the log (or its lock) is a link or not a regular file, or the
            file system refused the append.
    """
    path = Path(path)
    make_private_dirs(path.parent)
    line = orjson.dumps(record, option=orjson.OPT_SORT_KEYS) + b"\n"
    with FileLock(path, timeout=10.0):
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
                _write_all(fd, line)
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
    """A line of a JSONL log that is not one JSON record (cut short, edited, garbage)."""

    path: Path
    line: int
    reason: str

    def render(self) -> str:
        return f"{self.path}:{self.line}: {self.reason}"

    def to_json(self) -> dict[str, Any]:
        return {"file": str(self.path), "line": self.line, "error": self.reason}


@dataclass(frozen=True)
class LogRead:
    """A JSONL log as read: its records and its damaged lines (file and line number)."""

    records: list[Any]
    damaged: list[DamagedLine]


def read_log(path: Path, *, what: str = "log", limit: int = MAX_LOG_BYTES) -> LogRead:
    """Read a JSONL log: every whole record, and every damaged line by number.

    An absent log is empty. A log okstra must not read (a link, a FIFO, too large)
    raises; a bad line does not: it is reported in `damaged` and reading goes on.

    Raises:
        FileSystemError: the log is a link, not a regular file, too large or unreadable.
    """
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
