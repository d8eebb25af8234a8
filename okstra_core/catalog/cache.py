"""A validated catalog kept on disk between processes, keyed by the digest of its files.

Every headless command loads the catalog; parsing and validating a dozen TOML files
(and building the model classes' validators to do it) costs more than the rest of a
`wizard step`. So a catalog that validated is stored under the user cache directory
(`<cache>/catalog/<digest>.pickle`), and the next process that reads the very same
files loads it instead of validating them again.

The rules that make this safe:

* The key is a SHA-256 over every input: each file's kind, path and full bytes (an
  absent config file counts as absent), plus the cache format, okstra's and Python's
  versions and the size and mtime of the modules that define and check the catalog —
  okstra's own, and the installed pydantic's and pydantic-core's (found without
  importing them: a catalog read from the cache needs no pydantic, and an upgrade of
  either rewrites those files). A file that changed — by one byte, at any time
  granularity — gives another key: a cached catalog is never used for files it was not
  built from.
* Only a catalog that validated is stored; bad input is reported the normal way on
  every run.
* Each entry is written to a unique temporary file in the same directory and renamed
  over the target, so concurrent writers (two terminals, the app and a CLI) never
  leave a torn entry; they write identical bytes for the same key.
* An entry starts with a header holding the SHA-256 of its payload; an entry whose
  payload does not match (torn by a crash, truncated, edited), that does not unpickle
  to a catalog, or that is not owned by the current user or is writable by others, is
  ignored (and replaced by the next successful load). A cache is never a reason to
  fail: any error reading or writing it falls back to validating the files.
* No fsync: losing an entry in a crash costs one re-validation, never correctness.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import pickle
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .. import __version__
from ..store import read_cache_entry, write_cache_entry

FORMAT = b"okstra-catalog-cache 1\n"
# Entries kept per cache directory; older ones are removed when a new one is written.
KEEP = 8
_SUFFIX = ".pickle"
# The modules whose code decides what a catalog holds: this package's files and the
# records' plumbing, then the validating library's version files.
_CODE = ("models.py", "rules.py", "activity.py", "loaders.py", "cache.py", "../records.py")
_LIBRARIES = (("pydantic", "version.py"), ("pydantic_core", "__init__.py"))
# A temporary file this old was left by a writer that died.
_STALE_PART = 3600.0


def _code_stamp() -> bytes:
    """What identifies the code that built a catalog (an editable install changes too).

    pydantic is not imported: its version files are located by `find_spec` (which, for
    a top-level package, does not import it) and stamped by size and mtime.
    """
    parts = [__version__, sys.version]
    here = Path(__file__).parent
    files: list[tuple[str, Path | None]] = [(name, here / name) for name in _CODE]
    for package, name in _LIBRARIES:
        try:
            spec = importlib.util.find_spec(package)
        except (ImportError, ValueError):
            spec = None
        origin = spec.origin if spec is not None else None
        files.append((f"{package}/{name}", Path(origin).parent / name if origin else None))
    for label, path in files:
        try:
            if path is None:
                raise OSError
            st = os.stat(path)
            parts.append(f"{label}:{path}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            parts.append(f"{label}:?")
    return "\n".join(parts).encode("utf-8", "surrogateescape")


_STAMP: bytes | None = None


def digest(inputs: Iterable[tuple[str, Path, bool, bytes | None]]) -> str:
    """The cache key of a catalog built from `inputs` (kind, path, bundled, bytes)."""
    global _STAMP
    if _STAMP is None:
        _STAMP = _code_stamp()
    h = hashlib.sha256(FORMAT)
    h.update(_STAMP)
    for kind, path, bundled, data in inputs:
        name = str(path).encode("utf-8", "surrogateescape")
        h.update(b"\0%s\0%d\0%d\0%s\0" % (kind.encode(), bundled, len(name), name))
        if data is None:
            h.update(b"absent")
        else:
            h.update(b"%d\0" % len(data))
            h.update(data)
    return h.hexdigest()


def load(directory: Path, key: str, expected: type) -> Any | None:
    """The value stored under `key`, or None (absent, torn, foreign or stale)."""
    payload = read_cache_entry(directory / f"{key}{_SUFFIX}", FORMAT)
    if payload is None:
        return None
    try:
        value = pickle.loads(payload)
    except Exception:  # a stale or damaged entry is a miss, whatever it raised
        return None
    return value if type(value) is expected else None


def store(directory: Path, key: str, value: Any, *, keep: int = KEEP) -> None:
    """Store `value` under `key`: atomic, private, best effort (errors are ignored).

    The newest `keep` entries of `directory` are kept; older ones are removed.
    """
    try:
        target = directory / f"{key}{_SUFFIX}"
        write_cache_entry(target, FORMAT, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        _prune(directory, keep=target, count=keep)
    except Exception:  # a cache that cannot be written is only slower
        return


def _prune(directory: Path, *, keep: Path, count: int = KEEP) -> None:
    """Keep the newest `count` entries (and `keep`); drop leftovers of dead writers."""
    entries: list[tuple[float, Path]] = []
    for path in directory.iterdir():
        try:
            mtime = path.stat().st_mtime
        except OSError:
            continue
        if path.suffix == _SUFFIX:
            entries.append((mtime, path))
        elif path.suffix == ".part" and time.time() - mtime > _STALE_PART:
            with contextlib.suppress(OSError):
                path.unlink()
    entries.sort(reverse=True)
    for _, path in entries[count:]:
        if path != keep:
            with contextlib.suppress(OSError):
                path.unlink()
