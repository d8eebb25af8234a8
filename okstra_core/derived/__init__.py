"""Derived data: what okstra computed once and keeps between processes to save time.

Every cache of okstra lives here, under the user cache directory (`<cache>/<kind>/`):
the validated catalog (`catalog`), the parsed wizard text (`text`), wizard states a
process checked (`states`), markers of the shared documents okstra wrote
(`documents`) and the prompt templates' compiled code (`templates`). A room that
keeps derived data only says what it derives and from which inputs: it declares a
`Kind` and asks for `key(kind, inputs…)`, then `recall`/`keep` (bytes) or
`recall_value`/`keep_value` (a pickled value). Nothing else of a cache is written
anywhere else.

The rules, the same for every kind:

* **One key recipe.** A key is the SHA-256 of the entry format, the kind's name, a
  stamp of the code that derives it (okstra's and Python's versions, the size and
  modification time of the modules the kind names, and of the libraries' files it
  names, found without importing them) and every input, each length-prefixed (an
  absent input counts as absent). An input that changed by one byte, at any time
  granularity, gives another key: derived data is never used for inputs it was not
  derived from.
* **One entry format.** `okstra-derived 1`, the kind and the key on the first lines,
  then the SHA-256 of those lines and the payload together, then the payload. The key
  is inside the checksummed part: an entry renamed or copied to another key's name
  is not that key's entry and is a miss; a torn, truncated or edited entry fails its
  checksum and is a miss.
* **One trust rule.** The cache directory and the kind's directory are created 0700.
  An entry is read only through directories that are owned by the current user and
  writable by nobody else, never through a link, and only if it is a regular file of
  the user's that nobody else may write. A directory that breaks the rule is never
  read from nor written to: caching is skipped, silently.
* **One pruning rule.** After each write, the kind's directory keeps its newest
  `Kind.keep` entries; older entries, files of another format and temporary files
  left by a writer that died over an hour ago are removed.
* A cache is never a reason to fail and never needs fsync: any error reading is a
  miss, any error writing is ignored; an entry lost in a crash is derived again.
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
    """One kind of derived data (a named tuple: every command defines a few, and a
    tuple class is cheaper to make at import than a dataclass).

    Attributes:
        name: its directory under the user cache directory.
        keep: how many entries its directory keeps (the newest).
        code: the modules whose code decides the derived value, as paths inside
            `okstra_core` (`"catalog/models.py"`): a change to one gives new keys.
        libraries: (package, file) of installed libraries whose version decides the
            value (`("pydantic", "version.py")`), located without importing them.
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
    """The key of what `kind` derives from `inputs` (see the module: one recipe)."""
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


__all__ = ["FORMAT", "Kind", "keep", "keep_value", "key", "recall", "recall_value"]
