"""Listing runs — every run a row. (Naming one run: `locate`.)

`okstra runs` lists this project's runs; `--all` lists every project's runs from the
central `runs.jsonl` index (its entries are data too: an entry that is not a run
directory of a project is ignored). Every field read from a run is checked before it
is shown: a run whose files cannot be read, or that names itself differently from where
it lies, is a `damaged` row with why; a run directory without its manifest (a prepare
that did not finish) is an `incomplete` row. One run never breaks the list.
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

from ..documents.views import IndexEntryGlance
from ..environment import Environment
from ..errors import DataFileError, FileSystemError, OkstraError, StateInUseError
from ..paths import user_dirs
from ..records import config, dataclass
from ..store import read_log
from ..tasks import OKSTRA_DIR, RUN_MANIFEST, TASKS_DIR
from . import index
from .hints import next_steps
from .lead import LeadStatus, RunInfo, observe, read_run, resume_command
from .project import (
    MAX_ARG,
    RUN_ARG,
    RUNS_DIR,
    RunPlace,
    UnsafeProjectError,
    check_project,
    find_project_root,
    place_of,
    project_root_or_error,
    safe_directories,
)
from .runinfo import READ_ERRORS, info_of_row

__all__ = [
    "RUN_ARG",
    "RunRow",
    "all_runs",
    "find_project_root",
    "look",
    "newest_runs",
    "project_root_or_error",
    "project_runs",
    "run_row",
]

_TASK_TYPE = re.compile(r"^[a-z][a-z-]{0,62}[a-z]$")
# The longest text a leader field may hold (refs, ids, times, a short explanation).
_MAX_FIELD = index.MAX_LEADER_TEXT
# The longest reason a row shows (the JSON keeps the same, bounded, text).
_MAX_REASON = 500


# --------------------------------------------------------------------------- rows


@dataclass(frozen=True)
class RunRow:
    """One line of `okstra runs`.

    Attributes:
        place: where the run lies (its id, task and project come from here).
        state: `ok`, `damaged` (why in `problem`), `incomplete` (no run manifest: a
            prepare that did not finish) or `missing` (indexed, no longer on disk).
        note: something the look could not do (e.g. record the lead's end on a
            read-only project).
        seen_at: the moment its JSON's `ageSeconds` is measured at (set by whoever
            shows the row: `at`).

    Its JSON (`records.to_data`) is an entry of `okstra runs --json` and the body of
    `okstra status --json`.
    """

    __pydantic_config__ = config(
        camel_case=True,
        aliases={"run_ref": "run", "state": "runState"},
        skip=("place", "info", "seen_at"),
        views=(
            "run_id",
            "run_ref",
            "run_dir",
            "project_root",
            "task_key",
            "team_size",
            "backend",
            "lead_status",
            "age_seconds",
            "resume_command",
            "next_steps",
        ),
        first=(
            "run_id",
            "run_ref",
            "run_dir",
            "project_root",
            "task_key",
            "task_type",
            "team_size",
            "backend",
            "lead",
            "lead_status",
            "state",
            "created_at",
            "age_seconds",
            "resume_command",
            "problem",
            "note",
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

    @property
    def run_id(self) -> str:
        return self.place.name

    @property
    def run_ref(self) -> str:
        return self.place.ref

    @property
    def run_dir(self) -> Path:
        return self.place.path

    @property
    def project_root(self) -> Path:
        return self.place.root

    @property
    def task_key(self) -> str:
        return self.place.task_key

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
        """The commands that can work for this run now (`life.hints`)."""
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
    return text if len(text) <= _MAX_REASON else text[: _MAX_REASON - 1] + "…"


def look(run: RunInfo, environment: Environment) -> tuple[LeadStatus, str | None]:
    """The lead's status, and a note when its end could not be recorded.

    Looking records the lead's end the first time it is seen; that is the one write a
    look makes. On a read-only project (or while another okstra holds the run's lock)
    the status is still given, with a note saying it was not recorded.

    Raises:
        OkstraError: the run's files are damaged (a `DataFileError` names the manifest).
    """
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
        return f"its manifest names the run {_short(info.run_id)!r}, not its directory's name"
    if info.task_key != place.task_key:
        return f"its manifest names the task {_short(info.task_key)!r}, not {place.task_key}"
    if not _TASK_TYPE.fullmatch(info.task_type):
        return f"its manifest's task type {_short(info.task_type)!r} is not a task type"
    for key, value in info.leader.items():
        if isinstance(value, str) and len(value) > _MAX_FIELD:
            return (
                f"its leader's {_short(key)} is too long ({len(value)} characters; "
                f"the limit is {_MAX_FIELD})"
            )
    # Numbers (pids, start times, exit statuses) are bounded where the lead is read
    # (`life.runinfo`): a bad one makes the lead `damaged`, naming the field.
    return None


def _short(value: str) -> str:
    return value if len(value) <= 60 else value[:59] + "…"


def run_row(place: RunPlace, environment: Environment, *, real: bool = True) -> RunRow:
    """One run's row; a damaged or incomplete run is a row saying so, never an error."""
    manifest = place.path / RUN_MANIFEST
    if not real:
        return RunRow(
            place=place,
            state="damaged",
            created_at=_file_time(place.path),
            problem="the run directory is a symbolic link: okstra does not read runs through links",
        )
    if not os.path.lexists(manifest):
        return RunRow(
            place=place,
            state="incomplete",
            created_at=_file_time(place.path),
            problem=f"no {RUN_MANIFEST}: a prepare that did not finish left this directory "
            "(`okstra runs --prune` removes it)",
        )
    try:
        info = read_run(place.path)
    except READ_ERRORS as exc:
        return RunRow(
            place=place,
            state="damaged",
            created_at=_file_time(manifest),
            problem=_reason(exc, place.path),
        )
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
    """When the run's inputs were written (ns), 0 if unknown: `run-inputs.json` is
    written once, when the run is prepared, and never again."""
    try:
        return os.lstat(f"{run_dir}/run-inputs.json").st_mtime_ns
    except OSError:
        return 0


def _sorted(rows: list[RunRow]) -> list[RunRow]:
    """Newest first. `createdAt` is to the second: two runs prepared within the same
    second are told apart by when their inputs were written (looked up only for them)."""

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
    """The project's `limit` newest runs (every run when None), newest first, and how
    many runs the project has.

    A settled run (its lead never launched or ended, no worker running: nothing to look
    at) is shown from the project's runs index (`life.index`) without opening its
    manifest, while the manifest still has the row's stamp; every other run is read
    from its manifest and its lead looked at. With a limit, settled runs are ranked by
    the index's creation time first and only the newest are made rows: a listing of a
    project with ten thousand runs costs the index, a look at each run's directory and
    `limit` rows.
    """
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
    rows.extend(_settled_row(project_root, indexed, environment) for *_, indexed in settled)
    ordered = _sorted(rows)
    return (ordered if limit is None else ordered[:limit]), total


# A settled run: when its index row says it was created, its directory, its row.
_Settled = tuple[float, str, index.IndexRow]


def _settled_row(project_root: Path, row: index.IndexRow, environment: Environment) -> RunRow:
    """The row of a settled run, from its index row (`index.listing`)."""
    group, task, _, name = row.run.split("/")
    place = RunPlace(root=project_root, group=group, task=task, name=name)
    return _row_of(place, info_of_row(place.path, row), environment)


def _newest_settled(settled: list[_Settled], rows: list[RunRow], limit: int) -> list[_Settled]:
    """The `limit` newest settled runs, by the order `_sorted` gives the rows (creation
    time, then — among runs created in the same second — when their inputs were
    written, then the path): only these are made rows. Ties are counted over every
    run, so the keys are the ones `_sorted` computes for the rows kept."""
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
    if not isinstance(value, str) or len(value) > 64:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def all_runs(environment: Environment) -> list[RunRow]:
    """Every run in the central `runs.jsonl` index, newest first (missing ones flagged).

    An entry is used only if its `runDir` is a run directory of a project
    (`.okstra/tasks/<group>/<task>/runs/<run>`); a run of a project that fails the owner
    check is a damaged row, its files unread.
    """
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
            rows.append(
                RunRow(
                    place=place,
                    state="missing",
                    created_at=_index_time(record),
                    problem="the run directory no longer exists",
                )
            )
            continue
        real = os.path.isdir(place.path) and not os.path.islink(place.path)
        rows.append(run_row(place, environment, real=real))
    return _sorted(rows)
