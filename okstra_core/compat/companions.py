"""Companion files: where the progress of an earlier okstra's wizard is saved.

The source is never written: progress goes to `<name>.v2.<sha256-of-source>.json` beside
it, recording `legacySource: {path, sha256}`, so changed source bytes start afresh.
Looked for in order: okstra's own (`<name>.v2.<sha>.json`, then `<name>.v2.<sha>.<n>.json`),
then the earlier okstra's under the same names or its older `<name>.v2.json`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from ..errors import OkstraError
from ..store import read_bytes
from .shapes import LEGACY_SOURCE_FIELD


def source_digest(source_bytes: bytes) -> str:
    """The sha256 hex digest that names and matches a source file's companion."""
    return hashlib.sha256(source_bytes).hexdigest()


def source_record(source: Path, digest: str) -> dict[str, str]:
    return {"path": str(Path(source).resolve()), "sha256": digest}


def _companion_name(source: Path, digest: str, n: int | None = None) -> Path:
    suffix = f".{n}" if n is not None else ""
    return source.with_name(f"{source.name}.v2.{digest}{suffix}.json")


def older_companion_name(source: Path) -> Path:
    """The earlier okstra's first companion name: `<name>.v2.json`."""
    return source.with_name(f"{source.name}.v2.json")


def read_candidate(candidate: Path) -> dict[str, Any] | None:
    """A companion candidate's JSON object, or None when it is not one (or unreadable)."""
    try:
        data = orjson.loads(read_bytes(candidate, what="wizard state companion"))
    except (orjson.JSONDecodeError, OkstraError):
        return None
    return data if isinstance(data, dict) else None


def matches_source(data: Mapping[str, Any] | None, record: Mapping[str, str]) -> bool:
    source = None if data is None else data.get(LEGACY_SOURCE_FIELD)
    return (
        isinstance(source, dict)
        and source.get("path") == record["path"]
        and source.get("sha256") == record["sha256"]
    )


def _numbered_companions(source: Path, digest: str) -> list[tuple[int, Path]]:
    prefix = f"{source.name}.v2.{digest}."
    try:
        entries = list(source.parent.iterdir())
    except FileNotFoundError:
        return []
    found: list[tuple[int, Path]] = []
    for entry in entries:
        name = entry.name
        if not (name.startswith(prefix) and name.endswith(".json")):
            continue
        middle = name[len(prefix) : -len(".json")]
        if middle.isdigit() and not middle.startswith("0") and entry.is_file():
            found.append((int(middle), entry))
    return sorted(found)


def content_addressed(source: Path, digest: str) -> list[Path]:
    """Existing content-addressed names of this digest: canonical first, then by number."""
    canonical = _companion_name(source, digest)
    out = [canonical] if canonical.is_file() else []
    return out + [path for _, path in _numbered_companions(source, digest)]


def free_name(source: Path, digest: str) -> Path:
    """The first content-addressed name nothing occupies (canonical, then `.1`, `.2`, …)."""
    canonical = _companion_name(source, digest)
    if not canonical.exists():
        return canonical
    taken = {n for n, _ in _numbered_companions(source, digest)}
    n = 1
    while n in taken or _companion_name(source, digest, n).exists():
        n += 1
    return _companion_name(source, digest, n)


def companion_for(source: Path, source_bytes: bytes) -> tuple[Path, bool]:
    """`(companion, exists)` of a source file, its digest taken from `source_bytes`.

    A canonical name holding another source's file (or no JSON object) gives way to a
    numbered companion of this source, else the first free name. Nothing is written.
    """
    source = Path(source)
    digest = source_digest(source_bytes)
    record = source_record(source, digest)
    for candidate in content_addressed(source, digest):
        if matches_source(read_candidate(candidate), record):
            return candidate, True
    return free_name(source, digest), False
