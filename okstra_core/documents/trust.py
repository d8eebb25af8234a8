"""Shared documents okstra wrote, recognised by their exact bytes.

`task-manifest.json` and `project.json` outlive a run: the next prepare reads them,
extends them and writes them back. What it writes is checked by the document's record
(`Document.parse`) when it extends a file, so that okstra never leaves behind a file it
could not read back — and checking imports the validating library, which costs a
cold process more than the whole rest of a prepare.

Most of the time the file is exactly what the previous prepare wrote. So when okstra
has written such a file, it keeps a marker in the user cache directory, keyed by a
digest of the file's path and its exact bytes (`remember`); a later prepare that reads
the very same bytes (`recognised`) builds the extended document from values it holds
(`Document.from_own`) instead of checking it again.

The rules that make this safe:

* Only bytes okstra itself wrote are remembered, after the write succeeded.
* The key covers the file's absolute path and every byte: a file edited by hand,
  written by another tool, restored from a backup of something else, or torn, has
  another key and is checked like any file from outside.
* The key also covers okstra's version and the size and modification time of the
  modules that define the documents' rules: bytes another okstra wrote (older rules,
  an upgrade, an edited install) are never recognised.
* Markers are store cache entries (`okstra_core.store.read_cache_entry`): private,
  checksummed, owned by the current user and writable by nobody else, never read
  through a link. A marker that cannot be read or written is only slower, never an
  error.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from .. import __version__
from ..catalog import cache as entries

FORMAT = b"okstra-trusted-document 1\0"
# Markers kept: two documents per prepare (the task manifest and project.json), so
# the files of the last few dozen prepares stay recognised.
KEEP = 64
# The modules whose rules decide what a valid document is.
_RULES = ("base.py", "task.py", "../records.py")
_STAMP: bytes | None = None


def _stamp() -> bytes:
    global _STAMP
    if _STAMP is None:
        parts = [__version__]
        here = Path(__file__).parent
        for name in _RULES:
            try:
                st = os.stat(here / name)
                parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
            except OSError:
                parts.append(f"{name}:?")
        _STAMP = "\n".join(parts).encode()
    return _STAMP


def _key(path: Path, data: bytes) -> str:
    name = os.fsencode(os.path.abspath(path))
    h = hashlib.sha256(FORMAT)
    h.update(b"%s\0%d\0%s\0" % (_stamp(), len(name), name))
    h.update(data)
    return h.hexdigest()


def recognised(path: Path, data: bytes, cache_dir: Path) -> bool:
    """Whether okstra wrote exactly `data` to `path` (a marker says so)."""
    return entries.load(cache_dir / "documents", _key(path, data), bool) is True


def remember(path: Path, data: bytes, cache_dir: Path) -> None:
    """Mark `data` as the bytes okstra just wrote to `path` (best effort)."""
    entries.store(cache_dir / "documents", _key(path, data), True, keep=KEEP)
