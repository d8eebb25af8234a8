"""Shared documents okstra wrote, recognised by their exact bytes.

`task-manifest.json` and `project.json` outlive a run: the next prepare reads them,
extends them and writes them back. What it writes is checked by the document's record
(`Document.parse`) when it extends a file, so that okstra never leaves behind a file it
could not read back — and checking imports the validating library, which costs a
cold process more than the whole rest of a prepare.

Most of the time the file is exactly what the previous prepare wrote. So when okstra
has written such a file, it keeps a marker (derived data, `okstra_core.derived`),
keyed by the file's path and its exact bytes (`remember`); a later prepare that reads
the very same bytes (`recognised`) builds the extended document from values it holds
(`Document.from_own`) instead of checking it again.

The rules that make this safe:

* Only bytes okstra itself wrote are remembered, after the write succeeded.
* The key covers the file's absolute path and every byte: a file edited by hand,
  written by another tool, restored from a backup of something else, or torn, has
  another key and is checked like any file from outside. The key is inside the
  marker's checksummed content: a marker renamed or copied to another key's name
  recognises nothing.
* The key also covers okstra's version and the size and modification time of the
  modules that define the documents' rules: bytes another okstra wrote (older rules,
  an upgrade, an edited install) are never recognised.
* Markers follow the derived-data rules: private, checksummed, owned by the current
  user and writable by nobody else, never read through a link. A marker that cannot
  be read or written is only slower, never an error.
"""

from __future__ import annotations

import os
from pathlib import Path

from .. import derived

# Two documents per prepare (the task manifest and project.json): the files of the
# last few dozen prepares stay recognised. Their rules are in `base` and `task`.
DOCUMENTS = derived.Kind(
    "documents", keep=64, code=("documents/base.py", "documents/task.py", "records.py")
)
# The marker's content: what is vouched for is in its key.
_MARK = b"written by okstra"


def _key(path: Path, data: bytes) -> str:
    return derived.key(DOCUMENTS, os.path.abspath(path), data)


def recognised(path: Path, data: bytes, cache_dir: Path) -> bool:
    """Whether okstra wrote exactly `data` to `path` (a marker says so)."""
    return derived.recall(cache_dir, DOCUMENTS, _key(path, data)) == _MARK


def remember(path: Path, data: bytes, cache_dir: Path) -> None:
    """Mark `data` as the bytes okstra just wrote to `path` (best effort)."""
    derived.keep(cache_dir, DOCUMENTS, _key(path, data), _MARK)
