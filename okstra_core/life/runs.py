"""Listing runs (`okstra runs`, `--all` from the central `runs.jsonl` index): every run a row.

Every field read is checked first: an unreadable or misnamed run is a `damaged` row with
why, a run directory without its manifest an `incomplete` row. One run never breaks the list.
"""

from __future__ import annotations

import dataclasses
import heapq
import os
import re
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..discovery import UnsafeProjectError, check_project, safe_directories
from ..discovery import find_project_root as find_project_root
from ..documents.views import IndexEntryGlance
from ..environment import Environment
from ..errors import DataFileError, FileSystemError, OkstraError, StateInUseError
from ..paths import user_dirs
from ..records import Delegate, config, dataclass
from ..store import read_log
from ..tasks import OKSTRA_DIR, RUN_MANIFEST, TASKS_DIR
from . import index
from .lead import observe
from .project import MAX_ARG, RUNS_DIR, RunPlace, place_of
from .project import project_root_or_error as project_root_or_error
from .runinfo import READ_ERRORS, RunInfo, clip, info_of_row, read_run, resume_command
from .status import LeadStatus, next_steps
from .workers.observe import iso_time

_TASK_TYPE = re.compile(r"^[a-z][a-z-]{0,62}[a-z]$")
# The longest text a leader field may hold (refs, ids, times, a short explanation).
_MAX_FIELD = index.MAX_LEADER_TEXT
# The longest reason a row shows (the JSON keeps the same, bounded, text).
_MAX_REASON = 500


@dataclass(frozen=True)
class RunRow:
    """One line of `okstra runs`: `state` `ok`, `damaged` (why in `problem`), `incomplete` or
    `missing`; `seen_at`: when `ageSeconds` is measured (`at`)."""

    __pydantic_config__ = config(
        camel_case=True,
        aliases={"run_ref": "run", "state": "runState"},
        skip=("place", "info", "seen_at"),
        views=(
            *("run_id", "run_ref", "run_dir", "project_root", "task_key", "team_size", "backend"),
            *("lead_status", "age_seconds", "resume_command", "next_steps"),
        ),
        first=(
            *("run_id", "run_ref", "run_dir", "project_root", "task_key", "task_type", "team_size"),
            *("backend", "lead", "lead_status", "state", "created_at", "age_seconds"),
            "resume_command",
        ),
    )

    place: RunPlace
    state: str
    info: RunInfo | None = None
    lead: LeadStatus | None = None
    task_type: str = ""
    created_at: datetime | None = None
    problem: str | None = None
    note: str | None = None
    seen_at: datetime | None = None

    run_id = Delegate[str]("place.name")
    run_ref = Delegate[str]("place.ref")
    run_dir = Delegate[Path]("place.path")
    project_root = Delegate[Path]("place.root")
    task_key = Delegate[str]("place.task_key")

    @property
    def team_size(self) -> int | None:
        return self.info.team_size if self.info is not None else None

    @property
    def backend(self) -> str | None:
        return self.lead.backend if self.lead is not None else None

    @property
    def resume_command(self) -> str | None:
        return resume_command(self.info) if self.info is not None else None

    @property
    def next_steps(self) -> tuple[str, ...]:
        """The commands that can work for this run now (`life.status`)."""
        if self.state != "ok" or self.info is None or self.lead is None:
            return ()
        return next_steps(self.info, self.lead)

    @property
    def age_seconds(self) -> int | None:
        return self.age_at(self.seen_at) if self.seen_at is not None else None

    def at(self, now: datetime) -> RunRow:
        """The row with its age measured at `now` (for its JSON)."""
        return dataclasses.replace(self, seen_at=now)

    def age_at(self, now: datetime) -> int | None:
        """The run's age at `now`, in whole seconds (None when its creation is unknown)."""
        if self.created_at is None:
            return None
        try:
            return max(0, int((now - self.created_at).total_seconds()))
        except (OverflowError, TypeError):
            return None

    def lead_status(self) -> str:
        if self.state == "ok" and self.lead is not None:
            return self.lead.label()
        return "incomplete" if self.state == "incomplete" else "damaged"


def _reason(exc: BaseException, run_dir: Path | None = None) -> str:
    """Why, in at most `_MAX_REASON` characters; a file of the run named from its directory."""
    if isinstance(exc, OkstraError):
        text = exc.render()
        if run_dir is not None and exc.path is not None:
            try:
                where = Path(exc.path).relative_to(run_dir)
            except ValueError:
                pass
            else:
                text = ": ".join(str(p) for p in (where, exc.field, exc.message) if p)
    else:
        text = f"{type(exc).__name__}: {exc}"
    return clip(text, _MAX_REASON)


def look(run: RunInfo, environment: Environment) -> tuple[LeadStatus, str | None]:
    """The lead's status (its end recorded when first seen), and a note when it could not be.
    Raises `OkstraError` when the run's files are damaged."""
    try:
        try:
            return observe(run, environment), None
        except (FileSystemError, StateInUseError) as exc:
            status = observe(run, environment, record=False)
            return status, f"the lead's end was not recorded: {_reason(exc)}"
    except OkstraError:
        raise
    except READ_ERRORS as exc:
        # A leader field of the wrong type or size: the run file is damaged, named.
        raise DataFileError(
            f"its leader cannot be looked at: {_reason(exc)}", path=run.manifest_path
        ) from None


def _file_time(path: Path) -> datetime | None:
    try:
        return datetime.fromtimestamp(os.lstat(path).st_mtime, UTC)
    except (OSError, OverflowError, ValueError):
        return None


def _mismatch(info: RunInfo, place: RunPlace) -> str | None:
    """Why the manifest's own names disagree with where the run lies (None if they agree)."""
    if info.run_id != place.name:
        return f"its manifest names the run {clip(info.run_id, 60)!r}, not its directory's name"
    if info.task_key != place.task_key:
        return f"its manifest names the task {clip(info.task_key, 60)!r}, not {place.task_key}"
    if not _TASK_TYPE.fullmatch(info.task_type):
        return f"its manifest's task type {clip(info.task_type, 60)!r} is not a task type"
    for key, value in info.leader.items():
        if isinstance(value, str) and len(value) > _MAX_FIELD:
            return (
                f"its leader's {clip(key, 60)} is too long ({len(value)} characters; "
                f"the limit is {_MAX_FIELD})"
            )
    return None


def run_row(place: RunPlace, environment: Environment, *, real: bool = True) -> RunRow:
    """One run's row; a damaged or incomplete run is a row saying so, never an error."""
    manifest = place.path / RUN_MANIFEST
    if not real:
        why = "the run directory is a symbolic link: okstra does not read runs through links"
        return RunRow(place=place, state="damaged", created_at=_file_time(place.path), problem=why)
    if not os.path.lexists(manifest):
        why = (
            f"no {RUN_MANIFEST}: a prepare that did not finish left this directory "
            "(`okstra runs --prune` removes it)"
        )
        return RunRow(
            place=place, state="incomplete", created_at=_file_time(place.path), problem=why
        )
    try:
        info = read_run(place.path)
    except READ_ERRORS as exc:
        why = _reason(exc, place.path)
        return RunRow(place=place, state="damaged", created_at=_file_time(manifest), problem=why)
    return _row_of(place, info, environment)


def _row_of(place: RunPlace, info: RunInfo, environment: Environment) -> RunRow:
    """The row of a run read (from its manifest or its index row), its lead looked at."""
    damaged = _mismatch(info, place)
    if damaged is not None:
        created = _file_time(place.path / RUN_MANIFEST)
        return RunRow(place=place, state="damaged", created_at=created, problem=damaged)
    common: dict[str, Any] = {
        "place": place,
        "info": info,
        "task_type": info.task_type,
        "created_at": info.created_at,
    }
    try:
        lead, note = look(info, environment)
        # The row's JSON must be exact JSON: a number past 64 bits is no process, status
        # or signal, and is shown as the damage it is.
        for number in (lead.exit_status, lead.signal, lead.process_id):
            if number is not None and not -(2**63) <= number < 2**64:
                raise OverflowError(f"{number} does not fit in 64 bits")
    except READ_ERRORS as exc:
        return RunRow(state="damaged", problem=_reason(exc, place.path), **common)
    if lead.state == "damaged":
        return RunRow(state="damaged", lead=lead, note=note, problem=lead.detail, **common)
    return RunRow(state="ok", lead=lead, note=note, **common)


def _written_ns(run_dir: Path | str) -> int:
    """When the run was prepared (ns; `run-inputs.json` is written once), 0 if unknown."""
    try:
        return os.lstat(f"{run_dir}/run-inputs.json").st_mtime_ns
    except OSError:
        return 0


def _sorted(rows: list[RunRow]) -> list[RunRow]:
    """Newest first; runs created in the same second by when their inputs were written."""
    stamps = [_row_stamp(row) for row in rows]
    tied = {s for s, n in Counter(stamps).items() if n > 1}

    def key(at: int) -> tuple[float, int, str]:
        row = rows[at]
        written = _written_ns(row.run_dir) if stamps[at] in tied else 0
        return (stamps[at], written, str(row.run_dir))

    return [rows[at] for at in sorted(range(len(rows)), key=key, reverse=True)]


def project_runs(project_root: Path, environment: Environment) -> list[RunRow]:
    """Every run of the project (incomplete ones too), newest first (see `newest_runs`)."""
    return newest_runs(project_root, environment)[0]


def newest_runs(
    project_root: Path, environment: Environment, limit: int | None = None
) -> tuple[list[RunRow], int]:
    """The project's `limit` newest runs (all when None), newest first, and how many it has.

    A settled run is shown from the runs index unopened, and only the `limit` newest made
    rows: a listing costs the index, a look at each run's directory and `limit` rows."""
    tasks = os.path.join(project_root, OKSTRA_DIR, TASKS_DIR)
    rows: list[RunRow] = []
    settled: list[_Settled] = []
    stamps: dict[str | None, float] = {}
    for group, task, name, real, indexed in index.listing(project_root):
        if indexed is not None and indexed.settled:
            key = indexed.created_at
            at = stamps.get(key)
            if at is None:
                at = stamps[key] = _index_stamp(key)
            settled.append((at, f"{tasks}/{group}/{task}/{RUNS_DIR}/{name}", indexed))
        else:
            place = RunPlace(root=project_root, group=group, task=task, name=name)
            rows.append(run_row(place, environment, real=real))
    total = len(rows) + len(settled)
    if limit is not None and len(settled) > limit:
        settled = _newest_settled(settled, rows, limit)
    for *_, indexed in settled:
        group, task, _, name = indexed.run.split("/")
        place = RunPlace(root=project_root, group=group, task=task, name=name)
        rows.append(_row_of(place, info_of_row(place.path, indexed), environment))
    ordered = _sorted(rows)
    return (ordered if limit is None else ordered[:limit]), total


# A settled run: when its index row says it was created, its directory, its row.
_Settled = tuple[float, str, index.IndexRow]


def _newest_settled(settled: list[_Settled], rows: list[RunRow], limit: int) -> list[_Settled]:
    """The `limit` newest settled runs, in `_sorted`'s order (ties counted over every run)."""
    counts = Counter(item[0] for item in settled)
    counts.update(_row_stamp(row) for row in rows)
    keys = [
        (at, _written_ns(run_dir) if counts[at] > 1 else 0, run_dir, n)
        for n, (at, run_dir, _) in enumerate(settled)
    ]
    return [settled[key[3]] for key in heapq.nlargest(limit, keys)]


def _row_stamp(row: RunRow) -> float:
    try:
        return row.created_at.timestamp() if row.created_at else 0.0
    except (OverflowError, ValueError, OSError):
        return 0.0


def _index_stamp(created_at: str | None) -> float:
    """When an index row says its run was created (0 when it does not say, or badly)."""
    try:
        return datetime.fromisoformat(created_at).timestamp() if created_at else 0.0
    except (ValueError, OverflowError, OSError):
        return 0.0


def _index_place(record: IndexEntryGlance | None) -> RunPlace | None:
    """The run directory an index record names, if it is one of a project (else None)."""
    if record is None:
        return None
    raw = record.run_dir
    if not isinstance(raw, str) or not os.path.isabs(raw) or len(raw) > MAX_ARG or "\0" in raw:
        return None
    lexical = Path(os.path.normpath(raw))
    if os.path.lexists(lexical):
        lexical = Path(os.path.realpath(lexical))
    return place_of(lexical)


def _index_time(record: IndexEntryGlance) -> datetime | None:
    value = record.at
    return iso_time(value) if isinstance(value, str) and len(value) <= 64 else None


def all_runs(environment: Environment) -> list[RunRow]:
    """Every run in the central `runs.jsonl` index that is a project's run, newest first (a
    project failing the owner check gives damaged rows, unread)."""
    index = user_dirs(environment.env).runs_index
    seen: dict[Path, tuple[RunPlace, IndexEntryGlance]] = {}
    for line in read_log(index, what="runs index").records:
        record = IndexEntryGlance.of(line)
        place = _index_place(record)
        if place is not None and record is not None:
            seen[place.path] = (place, record)
    safe = safe_directories(environment.env)
    rows: list[RunRow] = []
    for place, record in seen.values():
        try:
            check_project(place.root, safe)
        except UnsafeProjectError as exc:
            if os.path.lexists(place.root):
                rows.append(RunRow(place=place, state="damaged", problem=_reason(exc)))
                continue
        if not os.path.lexists(place.path):
            at, why = _index_time(record), "the run directory no longer exists"
            rows.append(RunRow(place=place, state="missing", created_at=at, problem=why))
            continue
        real = os.path.isdir(place.path) and not os.path.islink(place.path)
        rows.append(run_row(place, environment, real=real))
    return _sorted(rows)
