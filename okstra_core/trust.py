"""Which projects their owner trusts: the per-user trust record (`require_trusted`)."""

from __future__ import annotations

import os
import shlex
from collections.abc import Collection, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from .documents.base import Document
from .errors import OkstraError, UsageError
from .paths import user_dirs
from .records import config, dataclass
from .store import FileLock, atomic_write_bytes

if TYPE_CHECKING:
    from pydantic import StrictInt, StrictStr

TRUSTED_ENV = "OKSTRA_TRUSTED_DIRECTORIES"
RECORD_NAME = "trusted-projects.json"
# What a refusal says the trust means.
MEANING = (
    "its agent settings (hooks and MCP servers in .claude/, .gemini/, .codex/) run "
    "when okstra starts an agent CLI there"
)
_CONFIG = config(camel_case=True, by_name=True)


class UntrustedProjectError(OkstraError):
    """A lead launch or a worker start in a project its person has not trusted."""

    FACTS: ClassVar[Collection[str]] = ("project", "trust_command")

    def __init__(self, project: Path, doing: str) -> None:
        self.project = str(project)
        self.trust_command = f"okstra trust {_quoted(project)}"
        super().__init__(
            f"this project is not trusted, so okstra will not {doing}: {MEANING}. "
            f"If you trust it, run: {self.trust_command}",
            path=project,
        )


def _quoted(path: Path) -> str:
    return shlex.quote(str(path))


@dataclass(frozen=True, kw_only=True)
class TrustEntry(Document):
    """One trusted project: its real path, the uid that owned it, and when."""

    __pydantic_config__ = _CONFIG
    WHAT: ClassVar[str] = "trusted project"

    path: StrictStr
    owner_uid: StrictInt
    trusted_at: StrictStr


@dataclass(frozen=True, kw_only=True)
class TrustRecord(Document):
    """`trusted-projects.json`: the projects this user trusts."""

    __pydantic_config__ = _CONFIG
    WHAT: ClassVar[str] = "trust record"

    version: StrictInt = 1
    projects: tuple[TrustEntry, ...] = ()


@dataclass(frozen=True, kw_only=True)
class TrustVerdict:
    """Whether a project is trusted, and why (what `doctor` shows)."""

    __pydantic_config__ = config(camel_case=True)

    project: str
    trusted: bool
    why: str


def record_path(env: Mapping[str, str] | None = None) -> Path:
    return user_dirs(env).data / RECORD_NAME


def _key(path: Path | str) -> tuple[str, int]:
    """(real path, owner uid) of a project directory; UsageError if not a directory."""
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except OSError as exc:
        raise UsageError(f"cannot look at the project {path}: {exc.strerror or exc}") from None
    if not os.path.isdir(real):
        raise UsageError(f"not a directory: {path}")
    return real, st.st_uid


def _read(env: Mapping[str, str] | None) -> TrustRecord:
    path = record_path(env)
    if not os.path.lexists(path):
        return TrustRecord()
    return TrustRecord.read(path)


def trusted_projects(env: Mapping[str, str] | None = None) -> tuple[TrustEntry, ...]:
    """Every entry of the record (a damaged record is a `DataFileError` naming it)."""
    return _read(env).projects


def _write(env: Mapping[str, str] | None, record: TrustRecord) -> None:
    atomic_write_bytes(record_path(env), record.to_bytes())  # its 0700 parents made


def trust_project(path: Path | str, env: Mapping[str, str] | None = None) -> TrustEntry:
    """Trust the project at `path` (its real path and current owner); idempotent."""
    real, uid = _key(path)
    with FileLock(record_path(env), timeout=10.0):
        record = _read(env)
        kept = tuple(e for e in record.projects if e.path != real)
        entry = TrustEntry(
            path=real, owner_uid=uid, trusted_at=datetime.now(UTC).isoformat(timespec="seconds")
        )
        _write(env, TrustRecord(projects=(*kept, entry)))
    return entry


def revoke_project(path: Path | str, env: Mapping[str, str] | None = None) -> bool:
    """Remove the project's entry; False when it had none. The directory need not exist."""
    real = os.path.realpath(path)
    if not os.path.lexists(record_path(env)):
        return False
    with FileLock(record_path(env), timeout=10.0):
        record = _read(env)
        kept = tuple(e for e in record.projects if e.path != real)
        if len(kept) == len(record.projects):
            return False
        _write(env, TrustRecord(projects=kept))
    return True


def verdict(path: Path | str, env: Mapping[str, str] | None = None) -> TrustVerdict:
    """Whether the project at `path` is trusted, and why (`DataFileError`, `UsageError`)."""
    env = os.environ if env is None else env
    real, uid = _key(path)
    for listed in (env.get(TRUSTED_ENV) or "").split(os.pathsep):
        directory = os.path.realpath(listed) if os.path.isabs(listed) else None
        if directory and (real == directory or real.startswith(directory.rstrip(os.sep) + os.sep)):
            return TrustVerdict(
                project=real, trusted=True, why=f"trusted by {TRUSTED_ENV} ({directory})"
            )
    entry = next((e for e in trusted_projects(env) if e.path == real), None)
    command = f"okstra trust {_quoted(Path(real))}"
    if entry is None:
        return TrustVerdict(project=real, trusted=False, why=f"not trusted ({command})")
    if entry.owner_uid != uid:
        why = f"trusted when uid {entry.owner_uid} owned it, uid {uid} owns it now"
        return TrustVerdict(project=real, trusted=False, why=f"not trusted: {why} ({command})")
    return TrustVerdict(project=real, trusted=True, why=f"trusted since {entry.trusted_at}")


def require_trusted(
    path: Path | str, env: Mapping[str, str] | None = None, *, doing: str = "start an agent CLI"
) -> None:
    """The gate before a lead or worker starts in the project (`UntrustedProjectError`)."""
    found = verdict(path, env)
    if not found.trusted:
        raise UntrustedProjectError(Path(found.project), doing)
