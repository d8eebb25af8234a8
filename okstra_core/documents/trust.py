"""Shared documents okstra wrote, recognised by their exact bytes.

Extending `task-manifest.json` or `project.json` checks the result with the record, which
imports pydantic (costly in a cold process). A file holding exactly the bytes okstra last
wrote is instead rebuilt with `Document.from_own`. Safe because: only bytes okstra wrote
are remembered, after the write; the marker's key (inside its checksummed content) covers
the absolute path, every byte, okstra's version and the document modules' size and mtime;
markers are derived data (private, checksummed, never through a link), and one that cannot
be read or written only makes prepare slower.
"""

from __future__ import annotations

import os
from pathlib import Path

from .. import derived

# Two documents per prepare: the files of the last few dozen prepares stay recognised.
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
