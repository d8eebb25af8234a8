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

import hashlib
import importlib.util
import os
import pickle
import sys
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from .. import __version__
from . import _entries

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


def recall(cache: Path, kind: Kind, entry_key: str) -> bytes | None:
    """The payload kept under `entry_key`, or None (absent, untrusted, torn or foreign)."""
    return _entries.read(cache, kind.name, entry_key, FORMAT)


def keep(cache: Path, kind: Kind, entry_key: str, payload: bytes) -> None:
    """Keep `payload` under `entry_key` (best effort: never raises), then prune."""
    _entries.write(cache, kind.name, entry_key, FORMAT, payload, kind.keep)


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
