"""Finding runs the way git finds a repository, and listing them.

A run is named by its directory (or its `run-manifest.json`), by its run id
(`requirements-discovery-001`), by `<task-id>/<run-id>` or `<group>/<task-id>/<run-id>`,
or by a task (`<group>/<task-id>`: its newest run). Names other than paths are looked
up in the project found by walking up from the current directory to the first
directory holding `.okstra` — so every command that takes a run works from anywhere
inside the project.

`okstra runs` lists this project's runs from its `.okstra/tasks`; `--all` lists every
project's runs from the central `runs.jsonl` index, newest first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from ..environment import Environment
from ..errors import OkstraError, UsageError
from ..paths import user_dirs
from ..prepare.runfiles import RUN_MANIFEST
from ..records import dataclass
from ..store import read_lines
from ..tasks import OKSTRA_DIR
from .lead import LeadStatus, RunInfo, observe, read_run, resume_command

RUN_ARG = "<run>"
_RUN_ID = re.compile(r"^[a-z][a-z-]*[a-z]-\d+$")
_SEGMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def find_project_root(start: Path) -> Path | None:
    """The nearest directory at or above `start` that holds `.okstra` (like git's `.git`)."""
    here = start.resolve()
    for candidate in (here, *here.parents):
        if (candidate / OKSTRA_DIR).is_dir():
            return candidate
    return None


def project_root_or_error(start: Path) -> Path:
    """`find_project_root`, or a UsageError saying where okstra looked."""
    root = find_project_root(start)
    if root is None:
        raise UsageError(
            f"not inside an okstra project: no {OKSTRA_DIR} directory in {start.resolve()} "
            "or any directory above it (prepare a run there first, or give a run directory)",
            field=RUN_ARG,
        )
    return root


def _runs_of(tasks: Path, group: str, task: str, run: str) -> list[Path]:
    return sorted(
        p.parent for p in tasks.glob(f"{group}/{task}/runs/{run}/{RUN_MANIFEST}") if p.is_file()
    )


def _newest(run_dirs: Iterable[Path]) -> Path | None:
    def key(path: Path) -> tuple[str, str]:
        try:
            info = read_run(path)
        except OkstraError:
            return ("", path.name)
        stamp = info.created_at.isoformat() if info.created_at else ""
        return (stamp, path.name)

    ordered = sorted(run_dirs, key=key)
    return ordered[-1] if ordered else None


def locate_run(value: str, start: Path) -> Path:
    """The run directory `value` names, looked up from `start` (the current directory).

    Raises:
        UsageError: naming `value` — no such run, not inside a project, or a name
            that fits several runs (they are listed).
    """
    path = Path(value)
    if not value:
        raise UsageError("expected a run", field=RUN_ARG)
    candidate = path if path.is_absolute() else start / path
    if candidate.is_dir() and (candidate / RUN_MANIFEST).is_file():
        return candidate.resolve()
    if candidate.is_file() and candidate.name == RUN_MANIFEST:
        return candidate.resolve().parent
    if candidate.exists():
        raise UsageError(
            f"not a run: {value} (expected a run directory, its {RUN_MANIFEST}, a run id "
            "such as requirements-discovery-001, or <task>/<run-id>)",
            field=RUN_ARG,
        )
    parts = value.strip("/").split("/")
    if not all(_SEGMENT.fullmatch(p) for p in parts) or len(parts) > 3:
        raise UsageError(
            f"no such run: {value} (expected a run directory, its {RUN_MANIFEST}, a run id "
            "such as requirements-discovery-001, or <task>/<run-id>)",
            field=RUN_ARG,
        )
    root = project_root_or_error(start)
    tasks = root / OKSTRA_DIR / "tasks"
    found: list[Path] = []
    if _RUN_ID.fullmatch(parts[-1]):
        group, task = ["*", "*", *parts[:-1]][-2:]
        found = _runs_of(tasks, group, task, parts[-1])
    if not found and len(parts) == 2:
        # `<group>/<task-id>`: the task's newest run.
        newest = _newest(_runs_of(tasks, parts[0], parts[1], "*"))
        found = [newest] if newest is not None else []
    if not found:
        raise UsageError(f"no run {value} in the project at {root}", field=RUN_ARG)
    if len(found) > 1:
        listed = ", ".join(str(p.relative_to(tasks).parent.parent) + "/" + p.name for p in found)
        raise UsageError(
            f"{value} names several runs ({listed}); give <task>/<run-id>", field=RUN_ARG
        )
    return found[0].resolve()


# --------------------------------------------------------------------------- listing


@dataclass(frozen=True)
class RunRow:
    """One line of `okstra runs`."""

    info: RunInfo | None
    lead: LeadStatus | None
    run_id: str
    run_dir: Path
    task_key: str
    task_type: str
    project_root: Path | None
    created_at: datetime | None
    problem: str | None = None

    def age_seconds(self, now: datetime) -> int | None:
        if self.created_at is None:
            return None
        return max(0, int((now - self.created_at).total_seconds()))

    def to_json(self, now: datetime) -> dict[str, Any]:
        info = self.info
        return {
            "runId": self.run_id,
            "run": info.ref if info is not None else self.run_id,
            "runDir": str(self.run_dir),
            "projectRoot": str(self.project_root) if self.project_root else None,
            "taskKey": self.task_key,
            "taskType": self.task_type,
            "teamSize": info.team_size if info is not None else None,
            "backend": self.lead.backend if self.lead is not None else None,
            "lead": self.lead.to_json() if self.lead is not None else None,
            "leadStatus": self.lead.label() if self.lead is not None else "damaged",
            "createdAt": self.created_at.isoformat() if self.created_at else None,
            "ageSeconds": self.age_seconds(now),
            "resumeCommand": resume_command(info) if info is not None else None,
            "problem": self.problem,
        }


def _damaged(exc: Exception) -> str:
    return exc.render() if isinstance(exc, OkstraError) else f"{type(exc).__name__}: {exc}"


def _row(run_dir: Path, environment: Environment, *, fallback: dict[str, Any]) -> RunRow:
    """One run's row; a damaged run is a row with its `problem`, never an error."""
    try:
        info = read_run(run_dir)
    except (OkstraError, OSError, ValueError) as exc:
        return RunRow(
            info=None,
            lead=None,
            run_id=str(fallback.get("runId") or run_dir.name),
            run_dir=run_dir,
            task_key=str(fallback.get("taskKey") or ""),
            task_type=str(fallback.get("taskType") or ""),
            project_root=Path(fallback["projectRoot"]) if fallback.get("projectRoot") else None,
            created_at=_parse(fallback.get("at")),
            problem=_damaged(exc),
        )
    try:
        lead = observe(info, environment)
    except (OkstraError, OSError, ValueError) as exc:
        return RunRow(
            info=info,
            lead=None,
            run_id=info.run_id,
            run_dir=info.run_dir,
            task_key=info.task_key,
            task_type=info.task_type,
            project_root=info.project_root,
            created_at=info.created_at,
            problem=_damaged(exc),
        )
    return RunRow(
        info=info,
        lead=lead,
        run_id=info.run_id,
        run_dir=info.run_dir,
        task_key=info.task_key,
        task_type=info.task_type,
        project_root=info.project_root,
        created_at=info.created_at,
    )


def _parse(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def _written_ns(run_dir: Path) -> int:
    """When the run's inputs were written (ns), 0 if unknown: `run-inputs.json` is
    written once, when the run is prepared, and never again."""
    try:
        return (run_dir / "run-inputs.json").stat().st_mtime_ns
    except OSError:
        return 0


def _sorted(rows: list[RunRow]) -> list[RunRow]:
    """Newest first. `createdAt` is to the second: two runs prepared within the same
    second are told apart by when their inputs were written."""

    def key(row: RunRow) -> tuple[float, int, str]:
        stamp = row.created_at.timestamp() if row.created_at else 0.0
        return (stamp, _written_ns(row.run_dir), str(row.run_dir))

    return sorted(rows, key=key, reverse=True)


def project_runs(project_root: Path, environment: Environment) -> list[RunRow]:
    """Every run under `<project>/.okstra/tasks`, newest first (each lead looked at)."""
    tasks = project_root / OKSTRA_DIR / "tasks"
    dirs = sorted(p.parent for p in tasks.glob(f"*/*/runs/*/{RUN_MANIFEST}") if p.is_file())
    return _sorted([_row(d, environment, fallback=_fallback(d, tasks, project_root)) for d in dirs])


def _fallback(run_dir: Path, tasks: Path, project_root: Path) -> dict[str, Any]:
    """What a damaged run's row still shows: where it is (task key, project, file time)."""
    try:
        at = datetime.fromtimestamp((run_dir / RUN_MANIFEST).stat().st_mtime).astimezone()
    except (OSError, OverflowError, ValueError):
        at = None
    return {
        "taskKey": run_dir.parent.parent.relative_to(tasks).as_posix(),
        "projectRoot": str(project_root),
        "at": at.isoformat() if at else None,
    }


def all_runs(environment: Environment) -> list[RunRow]:
    """Every run in the central `runs.jsonl` index, newest first (missing ones flagged)."""
    index = user_dirs(environment.env).runs_index
    seen: dict[str, dict[str, Any]] = {}
    for record in read_lines(index):
        if isinstance(record, dict) and isinstance(record.get("runDir"), str):
            seen[record["runDir"]] = record
    rows: list[RunRow] = []
    for run_dir, record in seen.items():
        path = Path(run_dir)
        if not (path / RUN_MANIFEST).is_file():
            rows.append(
                RunRow(
                    info=None,
                    lead=None,
                    run_id=str(record.get("runId") or path.name),
                    run_dir=path,
                    task_key=str(record.get("taskKey") or ""),
                    task_type=str(record.get("taskType") or ""),
                    project_root=Path(record["projectRoot"])
                    if isinstance(record.get("projectRoot"), str)
                    else None,
                    created_at=_parse(record.get("at")),
                    problem="the run directory no longer exists",
                )
            )
            continue
        rows.append(_row(path, environment, fallback=record))
    return _sorted(rows)


def human_age(seconds: int | None) -> str:
    """`45s`, `12m`, `3h`, `2d`."""
    if seconds is None:
        return "?"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
