"""Entries of derived data on disk, read and written through checked directory descriptors."""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import time
from pathlib import Path

from ..errors import OkstraError
from ..store import make_private_dirs

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


def _head(fmt: bytes, name: str, key: str) -> bytes:
    return b"%s\n%s\n%s\n" % (fmt, name.encode(), key.encode())


def _digest(head: bytes, payload: bytes) -> bytes:
    h = hashlib.sha256(head)
    h.update(payload)
    return h.hexdigest().encode()


def read(cache: Path, name: str, key: str, fmt: bytes) -> bytes | None:
    """The payload of the entry of `key`, or None (absent, untrusted, torn or foreign)."""
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
    head = _head(fmt, name, key)
    if not blob.startswith(head):
        return None  # another format, or another key's entry under this key's name
    digest, sep, payload = blob[len(head) :].partition(b"\n")
    if not sep or digest != _digest(head, payload):
        return None
    return payload


def write(cache: Path, name: str, key: str, fmt: bytes, payload: bytes, keep: int) -> None:
    """Write the entry of `key` (atomic rename, no fsync), then prune; never raises."""
    try:
        make_private_dirs(cache / name)  # 0700 at every level it creates
    except (OkstraError, OSError):  # a cache that cannot be written is only slower
        return
    directory = _open_dir(cache, name)
    if directory is None:
        return  # a directory someone else may write: derived data is not kept there
    head = _head(fmt, name, key)
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
        _prune(directory, key + SUFFIX, keep)
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
