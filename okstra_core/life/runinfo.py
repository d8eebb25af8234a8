"""What a run manifest says about a run and its lead, bounded and typed before use.

A repository can carry any run manifest: every field read is checked here, and one that
fails makes the lead `damaged`, naming it; reading never raises for a field."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from ..documents.views import ManifestGlance
from ..errors import DataFileError, OkstraError
from ..launch.sheet import check_session_id
from ..processes import process
from ..records import dataclass, field
from ..store import read_json
from ..tasks import RUN_MANIFEST, TIMELINE
from .report import manifest_path, read_run_manifest

if TYPE_CHECKING:
    from ..documents.run import RunManifest
    from ..documents.worker import ProjectRunsRow

LEADER_REF = "participant-001"
# A leader whose status is one of these has ended; its end is recorded.
ENDED = ("exited", "stopped", "gone")
# A leader whose launch failed (the CLI never ran, or exited at once): recorded by prepare.
LAUNCH_FAILED = "launch-failed"
TEXT_MAX = 512
_PATH_MAX = 4096
_TOKEN = re.compile(r"[a-z][a-z0-9-]{0,31}")
_PANE = re.compile(r"%\d{1,9}")
_WINDOW = re.compile(r"@\d{1,9}|[^\x00-\x1f\x7f-\x9f]{1,200}:[^\x00-\x1f\x7f-\x9f]{1,60}")
_START = re.compile(r"\d{1,20}")
_BACKENDS = ("tmux", "exec", "none")
# What reading one run may raise besides okstra's own errors: a run file is data, and a
# field of the wrong type or size must make that run's row damaged, never end the list.
READ_ERRORS = (
    *(OkstraError, OSError, ValueError, TypeError, LookupError, AttributeError),
    *(ArithmeticError, RecursionError, orjson.JSONEncodeError),
)


def clip(value: str, limit: int = TEXT_MAX) -> str:
    """`value`, at most `limit` characters (cut ones end in `…`)."""
    return value if len(value) <= limit else value[: limit - 1] + "…"


def _text(value: object, limit: int = TEXT_MAX) -> str | None:
    return clip(value, limit) if isinstance(value, str) and value else None


def parse_time(value: object) -> datetime | None:
    """An ISO time from a run file (timezone-aware, UTC when none is given), else None."""
    if not isinstance(value, str) or not value or len(value) > 64:
        return None
    try:
        parsed = datetime.fromisoformat(value)
        return parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    except (ValueError, OverflowError):
        return None


@dataclass(frozen=True)
class Leader:
    """The leader's fields okstra uses, each checked; `damage` names each bad one."""

    status: str | None = None
    runner: str | None = None
    backend: str | None = None
    session_id: str | None = None
    window_ref: str | None = None
    pane_ref: str | None = None
    tmux_socket: str | None = None
    process_id: int | None = None
    process_start: str | None = None
    parent_process_id: int | None = None
    parent_start: str | None = None
    pane_process_id: int | None = None
    pane_start: str | None = None
    exit_status: int | None = None
    exit_signal: int | None = None
    exited_at: str | None = None
    end_detail: str | None = None
    stop_requested_at: str | None = None
    damage: tuple[str, ...] = field(default=())

    def identity(self) -> process.Identity:
        """The foreground lead as launch recorded it (with the okstra that started it)."""
        return process.Identity(
            pid=self.process_id,
            start=self.process_start,
            parent=self.parent_process_id,
            parent_start=self.parent_start,
            with_parent=True,
        )

    def parent_identity(self) -> process.Identity:
        """The foreground okstra that started the lead, as launch recorded it."""
        return process.Identity(pid=self.parent_process_id, start=self.parent_start)


_Check = Callable[[object], tuple[object, str | None]]


def _checked(test: Callable[[Any], bool], what: str) -> _Check:
    """A field's check: the value when it passes `test`, else `expected <what>`."""

    def check(value: object) -> tuple[object, str | None]:
        return (value, None) if test(value) else (None, f"expected {what}")

    return check


def _pattern(rx: re.Pattern[str], what: str) -> _Check:
    return _checked(lambda value: isinstance(value, str) and rx.fullmatch(value) is not None, what)


def _ranged(low: int, high: int) -> _Check:
    def test(value: Any) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high

    return _checked(test, f"an integer {low} … {high}")


def _pid(value: object) -> tuple[object, str | None]:
    pid = process.as_pid(value)
    return (pid, None) if pid is not None else (None, f"expected a pid (2 … {process.pid_max()})")


def _socket_path(value: Any) -> bool:
    ok = isinstance(value, str) and value.startswith("/") and len(value) <= _PATH_MAX
    return ok and value.isprintable()


def _free_text(value: object) -> tuple[object, str | None]:
    return (_text(value), None) if isinstance(value, str) else (None, "expected text")


_time_text = _checked(lambda value: parse_time(value) is not None, "an ISO time")
_session = _checked(
    lambda value: isinstance(value, str) and check_session_id(value, "discover") is None,
    "a session id (letters, digits, '.', '_', ':' or '-')",
)
_START_TIME = _pattern(_START, "a start time (digits)")

_CHECKS: dict[str, tuple[str, _Check]] = {
    "status": ("status", _pattern(_TOKEN, "a status word")),
    "runner": ("runner", _pattern(_TOKEN, "a runner name")),
    "backend": ("launchBackend", _checked(lambda value: value in _BACKENDS, f"one of {_BACKENDS}")),
    "session_id": ("sessionRef", _session),
    "window_ref": ("windowRef", _pattern(_WINDOW, "<session>:<window> or @<digits>")),
    "pane_ref": ("paneRef", _pattern(_PANE, "%<digits>")),
    "tmux_socket": ("tmuxSocket", _checked(_socket_path, "an absolute socket path")),
    "process_id": ("processId", _pid),
    "process_start": ("processStart", _START_TIME),
    "parent_process_id": ("parentProcessId", _pid),
    "parent_start": ("parentStart", _START_TIME),
    "pane_process_id": ("paneProcessId", _pid),
    "pane_start": ("paneStart", _START_TIME),
    "exit_status": ("exitStatus", _ranged(0, 255)),
    "exit_signal": ("exitSignal", _ranged(1, 128)),
    "exited_at": ("exitedAt", _time_text),
    "end_detail": ("endDetail", _free_text),
    "stop_requested_at": ("stopRequestedAt", _time_text),
}
# The leader participant's keys the runs index keeps (`life.index`).
LEADER_KEYS = tuple(key for key, _ in _CHECKS.values())


def read_leader(raw: Mapping[str, Any]) -> Leader:
    """The leader participant's fields, checked; a bad field is left out and named."""
    values: dict[str, Any] = {}
    damage: list[str] = []
    for name, (key, check) in _CHECKS.items():
        value = raw.get(key)
        if value is None:
            continue
        values[name], why = check(value)
        if why is not None:
            damage.append(f"{key}: {why}, got {process.shown(value)}")
    return Leader(**values, damage=tuple(damage))


@dataclass(frozen=True)
class RunInfo:
    """One run, read from its manifest: `leader` as read, `lead` its checked fields, and
    `damage`, why the manifest is not as okstra writes it (its lead is `damaged`)."""

    run_dir: Path
    manifest_path: Path
    run_id: str
    task_key: str
    task_type: str
    project_root: Path | None
    created_at: datetime | None
    team_size: int
    entry_mode: str
    leader: Mapping[str, Any]
    lead: Leader = field(default_factory=Leader)
    damage: tuple[str, ...] = field(default=())
    # The lead's session id prepare minted (`leadSessionId`), when it is a valid one.
    minted_session_id: str | None = None

    @property
    def ref(self) -> str:
        """`<group>/<id>/<run-id>`: how the run is named from anywhere in its project."""
        return f"{self.task_key}/{self.run_id}" if self.task_key else self.run_id

    @property
    def timeline(self) -> Path:
        return self.run_dir.parent.parent / TIMELINE


def _no_leader(path: Path) -> DataFileError:
    return DataFileError(f"no participant {LEADER_REF}", path=path, field="participants")


def _loose(run_dir: Path, problem: DataFileError) -> tuple[Path, ManifestGlance, dict[str, Any]]:
    """A manifest its model refuses, glanced at when it still names a leader."""
    path = manifest_path(run_dir)
    try:
        data = read_json(path, what="run manifest", follow=False)
    except OkstraError:
        raise problem from None
    if not isinstance(data, dict):
        raise problem
    glance = ManifestGlance.of(data)
    if glance.execution_identity_version != 2:
        raise problem
    leader = glance.participant(LEADER_REF)
    if leader is None:
        raise _no_leader(path)
    return path, glance, leader


def _project_root(value: object) -> Path | None:
    text = _text(value, _PATH_MAX)
    if text is None or not text.startswith("/") or "\x00" in text:
        return None
    return Path(text)


def read_run(run_dir: Path) -> RunInfo:
    """Read a run's manifest (`DataFileError` when none, not version 2, or no leader); one
    the model refuses that still names its leader is read all the same, its lead `damaged`."""
    damage: tuple[str, ...] = ()
    manifest: RunManifest | ManifestGlance
    try:
        path, manifest = read_run_manifest(run_dir)
    except DataFileError as exc:
        path, manifest, leader = _loose(run_dir, exc)
        damage = (clip(exc.message if not exc.field else f"{exc.field}: {exc.message}"),)
    else:
        participant = manifest.participant(LEADER_REF)
        if participant is None:
            raise _no_leader(path)
        leader = participant.dump()
    executions = manifest.role_executions
    size = len(executions) if isinstance(executions, list | tuple) else 0
    root = _project_root(manifest.project_root)
    return _info(path, manifest, leader, size, project_root=root, damage=damage)


def info_of_row(run_dir: Path, row: ProjectRunsRow) -> RunInfo:
    """A run as its index row has it, each field checked as `read_run` does."""
    return _info(run_dir / RUN_MANIFEST, row, row.leader or {}, row.team_size, project_root=None)


def _info(path: Path, source: Any, leader: Mapping[str, Any], size: int, **more: Any) -> RunInfo:
    """The run a manifest or an index row (`source`) names, each field checked."""
    minted = _session(source.lead_session_id)[0]
    return RunInfo(
        run_dir=path.parent,
        manifest_path=path,
        run_id=_text(source.run_id, 200) or path.parent.name,
        task_key=_text(source.task_key, 200) or "",
        task_type=_text(source.task_type, 200) or "",
        created_at=parse_time(source.created_at),
        team_size=size,
        entry_mode=_text(source.entry_mode, 64) or "",
        leader=leader,
        lead=read_leader(leader),
        minted_session_id=minted if isinstance(minted, str) else None,
        **more,
    )


def resume_command(run: RunInfo) -> str:
    """The command that resumes the lead, from any directory."""
    return f"okstra resume {shlex.quote(str(run.run_dir))} --exec"
