"""Cache entries: derived data kept between processes under the user cache directory."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from .atomic import atomic_write_bytes
from .files import make_private_dirs

__all__ = ["read_cache_entry", "write_cache_entry"]


# A cache entry is `<header><sha256 of payload, hex>\n\n<payload>`: derived data kept
# between processes under the user cache directory (the catalog, state records, model
# schemas, compiled dataclass code). Some of it is loaded back as objects or code, so
# an entry is used only if it is a regular file of this user that nobody else may
# write, read without following a link, whose checksum matches.


def read_cache_entry(path: Path, header: bytes) -> bytes | None:
    """The payload of the entry at `path`, or None (absent, foreign, torn or stale)."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if (
            not stat.S_ISREG(st.st_mode)
            or st.st_uid != os.getuid()
            or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
        ):
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            blob = handle.read()
    except OSError:
        return None
    finally:
        os.close(fd)
    head, sep, payload = blob.partition(b"\n\n")
    if not sep or head != header + hashlib.sha256(payload).hexdigest().encode():
        return None
    return payload


def write_cache_entry(path: Path, header: bytes, payload: bytes) -> None:
    """Write an entry: private directories, atomic rename, no fsync.

    No fsync: an entry lost in a crash is rebuilt by the next run, a torn one fails
    its checksum.

    Raises:
        FileSystemError: as `atomic_write_bytes` (callers treat a cache as optional).
    """
    make_private_dirs(path.parent)  # 0700 at every level, whatever the umask
    blob = header + hashlib.sha256(payload).hexdigest().encode() + b"\n\n" + payload
    atomic_write_bytes(path, blob, durable=False)
