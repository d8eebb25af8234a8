"""Opening an earlier okstra's state file: resume its companion, or convert it afresh.

The source is never written: progress goes to a companion `<name>.v2.<sha256>.json`
beside it, recording `legacySource: {path, sha256}`, so changed source bytes start
afresh. Companions are tried in order: okstra's own (`<name>.v2.<sha>.json`, then
`<name>.v2.<sha>.<n>.json`), then the earlier okstra's under the same names or its older
`<name>.v2.json`. One okstra saved (valid, recording this source and digest) is resumed;
one the earlier okstra wrote in its v2 shape is taken over (converted, left untouched;
progress goes to a free name); one that matches the source but is invalid is skipped
with a note, and the source is converted. Nothing here writes a file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from ..catalog.models import Profile
from ..errors import OkstraError, StateFileError, UsageError
from ..records import dataclass
from ..store import parse_json_object, read_bytes
from ..vocabulary import SPAWN_PROCESS
from ..wizard.state import parse_v2
from .convert import convert_earlier_v2, convert_v1, known_entry_mode, source_notes
from .shapes import LEGACY_SOURCE_FIELD, SourceReader, is_earlier_v2, is_v1, source_record

if TYPE_CHECKING:
    from ..defaults import DefaultScopes
    from ..environment import Environment
    from ..pool import ModelPool


def source_digest(source_bytes: bytes) -> str:
    """The sha256 hex digest that names and matches a source file's companion."""
    return hashlib.sha256(source_bytes).hexdigest()


def _companion_name(source: Path, digest: str, n: int | None = None) -> Path:
    suffix = f".{n}" if n is not None else ""
    return source.with_name(f"{source.name}.v2.{digest}{suffix}.json")


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
    """`(companion, exists)` of a source file, its digest taken from `source_bytes`: a
    canonical name holding another source's file (or no JSON object) gives way to a
    numbered companion of this source, else the first free name. Nothing is written."""
    source = Path(source)
    digest = source_digest(source_bytes)
    record = source_record(source, digest)
    for candidate in content_addressed(source, digest):
        if matches_source(read_candidate(candidate), record):
            return candidate, True
    return free_name(source, digest), False


@dataclass(frozen=True)
class LegacyOpen:
    """The v2 `state` to save to `companion` (`resumed`: its saved content) and the
    `notes` for the person (skipped companions, slugified ids, answers dropped)."""

    companion: Path
    state: dict[str, Any]
    resumed: bool
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Source:
    """One source file being opened, and what converting it reads."""

    path: Path
    digest: str
    profile_loader: Callable[[str], Profile]
    pool: ModelPool
    scopes: DefaultScopes
    # host id → its own provider (None: it has none, or it is unknown).
    host_provider: Callable[[str], str | None] | None = None

    @property
    def record(self) -> dict[str, str]:
        return source_record(self.path, self.digest)

    def profile_of(self, raw: Mapping[str, Any]) -> Profile | None:
        """The profile of a payload's task type; None when absent or no longer known."""
        task_type = raw.get("task_type")
        if not isinstance(task_type, str) or not task_type.strip():
            return None
        try:
            return self.profile_loader(task_type.strip())
        except UsageError:
            return None

    def convert_earlier(self, raw: Mapping[str, Any], notes: list[str]) -> dict[str, Any]:
        return convert_earlier_v2(
            raw,
            profile=self.profile_of(raw),
            pool=self.pool,
            source=self.path,
            sha256=self.digest,
            notes=notes,
        )

    def convert(self, raw: Mapping[str, Any], notes: list[str]) -> dict[str, Any]:
        """`raw` converted (v1, or the earlier okstra's v2 shape)."""
        if not is_v1(raw):
            return self.convert_earlier(raw, notes)
        reader = SourceReader(raw, self.path)
        host = reader.string("host_runtime")
        return convert_v1(
            raw,
            profile=self.profile_of(raw),
            pool=self.pool,
            scopes=self.scopes,
            entry_mode=known_entry_mode(
                reader.string("host_entry_mode") or SPAWN_PROCESS, reader.source
            ),
            source=self.path,
            sha256=self.digest,
            home_provider=self.host_provider(host) if self.host_provider and host else None,
        )


def _skipped(companion: Path, exc: OkstraError) -> str:
    """The note for a companion that is skipped (its own problem, not the source's)."""
    problem = f"{exc.field}: {exc.message}" if exc.field else exc.message
    return (
        f"companion {companion} is not a valid wizard state ({problem}): "
        "it is skipped and left as it is"
    )


_Candidates = list[tuple[Path, dict[str, Any]]]


def _companions(source: _Source, notes: list[str]) -> tuple[tuple[Path, Any] | None, _Candidates]:
    """The companion to resume (or None), and the earlier okstra's ones to take over,
    in the order they are tried: content-addressed names first, then `<name>.v2.json`."""
    record = source.record
    takeovers: _Candidates = []
    for candidate in content_addressed(source.path, source.digest):
        payload = read_candidate(candidate)
        if payload is None or not matches_source(payload, record):
            continue  # another source's file: not ours to judge
        try:
            parse_v2(payload, str(candidate))
        except StateFileError as exc:
            if is_earlier_v2(payload):
                takeovers.append((candidate, payload))
            else:
                notes.append(_skipped(candidate, exc))
            continue
        return (candidate, payload), takeovers
    older = source.path.with_name(f"{source.path.name}.v2.json")  # the earlier okstra's first
    payload = read_candidate(older) if older.is_file() else None
    if payload is not None and matches_source(payload, record):
        try:
            if not is_earlier_v2(payload):
                parse_v2(payload, str(older))
            takeovers.append((older, payload))
        except StateFileError as exc:
            notes.append(_skipped(older, exc))
    return None, takeovers


def _taken_over(
    source: _Source, takeovers: _Candidates, companion: Path, notes: list[str]
) -> dict[str, Any] | None:
    """The state of the first companion that converts, or None when none does."""
    for taken_from, payload in takeovers:
        # One that does not convert (a field of the wrong type) is skipped like an
        # invalid one: the next one, or the source, is converted.
        attempt: list[str] = []
        try:
            if is_earlier_v2(payload):
                state = source.convert_earlier(payload, attempt)
            else:
                state = {**payload, LEGACY_SOURCE_FIELD: source.record}
        except StateFileError as exc:
            notes.append(_skipped(taken_from, exc))
            continue
        notes.extend(attempt)
        notes.append(
            f"progress is taken over from {taken_from} (left as it is); "
            f"it is saved to {companion} from now on"
        )
        return state
    return None


def open_legacy(
    source: Path,
    *,
    profile_loader: Callable[[str], Profile],
    pool: ModelPool,
    scopes: DefaultScopes,
    environment: Environment,
    host_provider: Callable[[str], str | None] | None = None,
) -> LegacyOpen:
    """Open an earlier okstra's state file (read once, never written).

    `profile_loader` raising `UsageError` means the task type is gone (asked again);
    `host_provider`: host id → its own provider, for a v1 lead without one. A
    `StateFileError` names the file and field of an unreadable or malformed source.
    """
    path = Path(source)
    data = read_bytes(path, what="wizard state file", error=StateFileError)
    raw = parse_json_object(data, path, what="wizard state JSON object", error=StateFileError)
    opened = _Source(path, source_digest(data), profile_loader, pool, scopes, host_provider)
    notes: list[str] = []
    resumed, takeovers = _companions(opened, notes)
    if resumed is not None:
        companion, state = resumed
    else:
        companion = free_name(path, opened.digest)
        state = _taken_over(opened, takeovers, companion, notes)
        if state is None:
            state = opened.convert(raw, notes)
        if not state.get("updated_at"):
            state["updated_at"] = environment.now().isoformat()
    return LegacyOpen(companion, state, resumed is not None, (*notes, *source_notes(raw)))
