"""The wizards on disk as files: list them for the start screen (read-only, no lock,
v1 files included, newest first), delete one (a v2 file okstra wrote, under its lock)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Literal

from ..compat.shapes import is_earlier_v2
from ..environment import Environment
from ..errors import OkstraError, UsageError
from ..paths import user_dirs
from ..records import config, dataclass
from ..store import FileLock
from ..wizard.prompt import Progress
from ..wizard.state import parse_v2
from .statefile import read_state, remove_state_file, state_version
from .wizard import Wizard

__all__ = ["SetupStatus", "WizardSummary", "delete_wizard", "list_wizards"]

# A listed setup's status: where its wizard stands, or why it cannot be opened.
SetupStatus = Literal["in-progress", "confirmed", "aborted", "broken"]


def delete_wizard(path: Path | str, environment: Environment | None = None) -> None:
    """Delete a v2 state file of the wizards dir, with its `.lock`, under its lock.

    Raises `UsageError` for any other file, a v1 file (never changed by okstra) or a
    companion whose v1 source exists, `StateInUseError` when the wizard is open
    elsewhere, and `StateFileError` when it does not load (a v1 file may not).
    """
    env = environment or Environment.real()
    path = Path(path)
    directory = user_dirs(env.env).wizards
    if path.suffix != ".json" or path.parent.resolve() != directory.resolve():
        raise UsageError(
            f"only a wizard state file in {directory} can be deleted", path=path, field="path"
        )
    if not path.is_file():
        raise UsageError("no such wizard state file", path=path)
    with FileLock(path):
        raw = read_state(path)
        if state_version(raw, path) != 2 or is_earlier_v2(raw):
            raise UsageError(
                "a wizard state file of the earlier okstra (v1, or its v2 shape) is never "
                "changed by okstra: delete it yourself",
                path=path,
            )
        source = parse_v2(raw, str(path)).legacy_source
        if source is not None and Path(source.path).exists():
            raise UsageError(
                f"this is the saved progress of the v1 file {source.path}: delete that file first",
                path=path,
            )
        remove_state_file(path)


@dataclass(frozen=True)
class WizardSummary:
    """One resumable wizard for the start screen / `okstra wizard list`: the file to
    open (a legacy wizard's v1 source), its task and task type ("": not chosen yet),
    progress, last save and status, and why it cannot be opened (None: it can)."""

    __pydantic_config__ = config(camel_case=True)

    path: Path
    task: str
    task_type: str
    progress: Progress
    updated_at: datetime | None
    legacy: bool
    status: SetupStatus
    problem: str | None = None
    project_root: str | None = None


def _parse_time(value: str) -> datetime | None:
    """An aware, usable time, or None (missing, malformed, no offset, absurd year)."""
    try:
        parsed = datetime.fromisoformat(value) if value else None
    except ValueError:
        return None
    # A year outside these is tampered with (or a broken clock): unknown.
    if parsed is None or parsed.tzinfo is None or not 1970 <= parsed.year < 10000:
        return None
    try:
        parsed.timestamp()
        parsed.astimezone()
    except (OverflowError, OSError, ValueError):
        return None
    return parsed


def _file_time(path: Path) -> datetime | None:
    """The file's own modification time (the link's, for a dangling link), or None."""
    try:
        return datetime.fromtimestamp(path.lstat().st_mtime).astimezone()
    except (OSError, OverflowError, ValueError):
        return None


def list_wizards(environment: Environment | None = None) -> list[WizardSummary]:
    """Resumable wizards in `<state dir>/wizards/`, newest first; v1 files included.

    A companion is listed as its v1 source while that exists; a file that cannot be
    opened is listed with its `problem`. Read-only: takes no lock.
    """
    env = environment or Environment.real()
    directory = user_dirs(env.env).wizards
    if not directory.is_dir():
        return []
    out: list[WizardSummary] = []
    for path in sorted(directory.glob("*.json")):
        if path.name.startswith("."):
            continue
        try:
            wizard = Wizard.open(path, environment=env)
        except OkstraError as exc:
            # One bad entry (a FIFO, a dangling link, tampered numbers) is listed as
            # broken with why; the others are still listed.
            out.append(
                WizardSummary(
                    path, "", "", Progress(0, 0), _file_time(path), False, "broken", exc.render()
                )
            )
            continue
        state = wizard.state
        source = state.legacy_source
        if not wizard.legacy and source is not None and Path(source.path).exists():
            continue
        if wizard.source != path:
            continue  # an earlier okstra's companion: listed as its source file
        try:
            progress = wizard.progress(simulate=False)
        except OkstraError:
            progress = (len(state.answered), len(state.answered))
        status: SetupStatus = (
            "aborted" if state.aborted else "confirmed" if state.confirmed else "in-progress"
        )
        root = str(state.project_root) if state.project_root else None
        when = _parse_time(state.updated_at)
        facts = (state.task_key, state.task_type, Progress(*progress), when, wizard.legacy, status)
        out.append(WizardSummary(path, *facts, project_root=root))

    def newest(summary: WizardSummary) -> tuple[float, str]:
        # Newest first; a file without a readable time sorts last.
        when = summary.updated_at
        return (-when.timestamp() if when is not None else float("inf"), summary.path.name)

    return sorted(out, key=newest)
