"""Derived data: what okstra computed once and keeps between processes to save time.

Every cache lives here, under `<cache>/<kind>/`: a room declares a `Kind`, asks for
`key(kind, inputs…)`, then `recall`/`keep` (bytes) or `recall_value`/`keep_value`
(pickled). The rules, the same for every kind:

* Key: SHA-256 of the format, the kind, a stamp of the deriving code (versions, size
  and mtime of the named modules and library files) and every input, length-prefixed.
* Entry: `okstra-derived 1`, kind and key lines, the SHA-256 of those and the payload,
  then the payload; a renamed, torn or edited entry is a miss.
* Trust: read and written only through 0700 directories of the user's, never through
  a link, a regular file nobody else may write; else caching is silently skipped.
* Pruning: after each write a kind keeps its newest `Kind.keep` entries; foreign files
  and temp files of writers dead over an hour are removed.
* Never a reason to fail, never fsynced: a read error is a miss, a write error ignored.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import pickle
import stat
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from .. import __version__
from ..errors import OkstraError
from ..store import make_private_dirs

_T = TypeVar("_T")

FORMAT = b"okstra-derived 1"
_PACKAGE = Path(__file__).resolve().parent.parent


class Kind(NamedTuple):
    """One kind of derived data (a named tuple: cheaper at import than a dataclass).

    `keep`: entries kept; `code`: modules (paths in `okstra_core`) and `libraries`
    ((package, file), not imported) whose change gives new keys.
    """

    name: str
    keep: int = 8
    code: tuple[str, ...] = ()
    libraries: tuple[tuple[str, str], ...] = ()


_STAMPS: dict[Kind, bytes] = {}


def _stamp(kind: Kind) -> bytes:
    """What identifies the code that derives `kind` (an editable install changes too)."""
    found = _STAMPS.get(kind)
    if found is not None:
        return found
    parts = [__version__, sys.version]
    files: list[tuple[str, Path | None]] = [(name, _PACKAGE / name) for name in kind.code]
    for package, name in kind.libraries:
        try:
            spec = importlib.util.find_spec(package)  # a top-level package is not imported
        except (ImportError, ValueError):
            spec = None
        origin = spec.origin if spec is not None else None
        files.append((f"{package}/{name}", Path(origin).parent / name if origin else None))
    for label, path in files:
        try:
            if path is None:
                raise OSError
            st = os.stat(path)
            parts.append(f"{label}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            parts.append(f"{label}:?")
    stamp = "\n".join(parts).encode("utf-8", "surrogateescape")
    _STAMPS[kind] = stamp
    return stamp


def key(kind: Kind, *inputs: bytes | str | None) -> str:
    """The key of what `kind` derives from `inputs`."""
    h = hashlib.sha256(FORMAT)
    for part in (kind.name.encode(), _stamp(kind), *inputs):
        if part is None:
            h.update(b"\0absent")
            continue
        data = part.encode("utf-8", "surrogateescape") if isinstance(part, str) else part
        h.update(b"\0%d\0" % len(data))
        h.update(data)
    return h.hexdigest()


def recall_value(cache: Path, kind: Kind, entry_key: str, expected: type[_T]) -> _T | None:
    """The value kept under `entry_key` if it is exactly of type `expected`, else None."""
    payload = recall(cache, kind, entry_key)
    if payload is None:
        return None
    try:
        value: Any = pickle.loads(payload)
    except Exception:  # a stale entry (renamed class, older pickle) is a miss, whatever it raised
        return None
    return value if type(value) is expected else None


def keep_value(cache: Path, kind: Kind, entry_key: str, value: Any) -> None:
    """Keep `value` (pickled) under `entry_key` (best effort: never raises)."""
    try:
        payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # an unpicklable value is only not cached
        return
    keep(cache, kind, entry_key, payload)


# ---------------------------------------------------------------------------- entries

SUFFIX = ".entry"
_PART = ".part"
# A temporary file this old was left by a writer that died.
_STALE_PART = 3600.0
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
# Longer than any entry okstra writes (the catalog of 10,000 models is a few MiB).
_MAX_ENTRY = 256 * 1024 * 1024


def _private(st: os.stat_result) -> bool:
    """Owned by the current user and writable by nobody else."""
    return st.st_uid == os.getuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _open_dir(cache: Path, name: str) -> int | None:
    """A descriptor of `<cache>/<name>` if both directories are trusted, else None."""
    try:
        root = os.open(cache, _DIR_FLAGS)
    except OSError:
        return None
    try:
        if not _private(os.fstat(root)):
            return None
        fd = os.open(name, _DIR_FLAGS, dir_fd=root)
    except OSError:
        return None
    finally:
        os.close(root)
    try:
        if _private(os.fstat(fd)):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def _head(name: str, key: str) -> bytes:
    return b"%s\n%s\n%s\n" % (FORMAT, name.encode(), key.encode())


def _digest(head: bytes, payload: bytes) -> bytes:
    h = hashlib.sha256(head)
    h.update(payload)
    return h.hexdigest().encode()


def recall(cache: Path, kind: Kind, key: str) -> bytes | None:
    """The payload kept under `key`, or None (absent, untrusted, torn or foreign)."""
    name = kind.name
    directory = _open_dir(cache, name)
    if directory is None:
        return None
    try:
        fd = os.open(key + SUFFIX, _READ_FLAGS, dir_fd=directory)
    except OSError:
        return None
    finally:
        os.close(directory)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or not _private(st) or st.st_size > _MAX_ENTRY:
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            blob = handle.read()
    except OSError:
        return None
    finally:
        os.close(fd)
    head = _head(name, key)
    if not blob.startswith(head):
        return None  # another format, or another key's entry under this key's name
    digest, sep, payload = blob[len(head) :].partition(b"\n")
    if not sep or digest != _digest(head, payload):
        return None
    return payload


def keep(cache: Path, kind: Kind, key: str, payload: bytes) -> None:
    """Keep `payload` under `key` (atomic rename, no fsync), then prune; never raises."""
    name = kind.name
    try:
        make_private_dirs(cache / name)  # 0700 at every level it creates
    except (OkstraError, OSError):  # a cache that cannot be written is only slower
        return
    directory = _open_dir(cache, name)
    if directory is None:
        return  # a directory someone else may write: derived data is not kept there
    head = _head(name, key)
    blob = head + _digest(head, payload) + b"\n" + payload
    part = f"{key}.{os.getpid()}.{time.monotonic_ns()}{_PART}"
    try:
        fd = os.open(part, _WRITE_FLAGS, 0o600, dir_fd=directory)
        try:
            view = memoryview(blob)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(part, key + SUFFIX, src_dir_fd=directory, dst_dir_fd=directory)
        _prune(directory, key + SUFFIX, kind.keep)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(part, dir_fd=directory)
    finally:
        os.close(directory)


def _prune(directory: int, written: str, keep: int) -> None:
    """Keep the newest `keep` entries (and `written`); remove what is not an entry."""
    entries: list[tuple[int, str]] = []
    now = time.time()
    with os.scandir(directory) as found:
        for item in found:
            try:
                st = item.stat(follow_symlinks=False)
            except OSError:
                continue
            if item.name.endswith(SUFFIX) and stat.S_ISREG(st.st_mode):
                entries.append((st.st_mtime_ns, item.name))
            elif item.name.endswith(_PART) and now - st.st_mtime < _STALE_PART:
                continue  # another writer's, being written
            elif not stat.S_ISDIR(st.st_mode):
                with contextlib.suppress(OSError):
                    os.unlink(item.name, dir_fd=directory)
    entries.sort(reverse=True)
    for _, entry in entries[keep:]:
        if entry != written:
            with contextlib.suppress(OSError):
                os.unlink(entry, dir_fd=directory)
