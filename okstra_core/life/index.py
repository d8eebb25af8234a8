"""The runs index of a project: `.okstra/runs-index.jsonl`, so `okstra runs` reads one
file instead of every run manifest.

Each change of a run's life appends one line — the run's row as it is now: prepared,
the lead launched or ended, a worker started or ended. Reading keeps the last line of
each run, so a torn or stale line costs nothing but that line. The index is derived
data: the manifests stay the truth. A run the index does not know (written by an
older okstra, or by a writer that died before its line) is found by listing the run
directories — a directory listing, no manifest read — and its row is added from its
manifest; a row whose run directory is gone is dropped. When the file holds more than
twice as many lines as runs, it is rewritten (atomically, under its lock) with one
line per run.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson

from ..documents.worker import ProjectRunsRow
from ..errors import OkstraError
from ..store import FileLock, append_line, atomic_write_bytes, read_bytes, read_json
from ..tasks import OKSTRA_DIR
from .workers.team import members

INDEX_NAME = "runs-index.jsonl"
RUN_MANIFEST = "run-manifest.json"
# Each row is small; a file this large is not an index okstra wrote.
MAX_INDEX_BYTES = 256 * 1024 * 1024
_RUN = re.compile(r"^[a-z][a-z-]*[a-z]-\d+$")
_SEGMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_RUN_PATH = re.compile(
    r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*/runs/[a-z][a-z-]*[a-z]-\d+"
)
_ENDED_LEAD = ("exited", "stopped", "gone")


class IndexRow(ProjectRunsRow):
    """One run in the index (`documents.worker.ProjectRunsRow`), and what it says."""

    @property
    def settled(self) -> bool:
        """Nothing of the run can be running: the lead never launched or ended, and no
        worker is running (a look at the run would find nothing new)."""
        lead = self.lead_status in ("prepared", "launch-failed", *_ENDED_LEAD)
        return lead and "running" not in self.workers.values()


def tasks_dir(project_root: Path) -> Path:
    return project_root / OKSTRA_DIR / "tasks"


def index_path(project_root: Path) -> Path:
    return project_root / OKSTRA_DIR / INDEX_NAME


def project_of(run_dir: Path) -> Path:
    """The project root of `<root>/.okstra/tasks/<group>/<task>/runs/<run-id>`."""
    return run_dir.parents[5]


def _relative(run_dir: Path) -> str:
    parts = run_dir.parts[-4:]
    return "/".join(parts)


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def row_of(run_dir: Path, manifest: Mapping[str, Any], *, now: str | None = None) -> IndexRow:
    """The run's row from its manifest (as JSON data)."""
    team = members(manifest)
    lead = next((m.participant for m in team if m.leader), {})
    workers = {m.short: m.status for m in team if not m.leader}
    return IndexRow(
        run=_relative(run_dir),
        run_id=_str(manifest.get("runId")) or run_dir.name,
        task_key=_str(manifest.get("taskKey")) or "",
        task_type=_str(manifest.get("taskType")) or "",
        created_at=_str(manifest.get("createdAt")),
        team_size=len(team),
        lead_status=_str(lead.get("status")) or "prepared",
        lead_backend=_str(lead.get("launchBackend")),
        workers=workers,
        updated_at=now,
    )


def note(run_dir: Path, manifest: Mapping[str, Any], *, now: str | None = None) -> None:
    """Append the run's row as `manifest` has it now (best effort: the index is derived)."""
    with contextlib.suppress(OkstraError, OSError, IndexError):
        append_line(index_path(project_of(run_dir)), row_of(run_dir, manifest, now=now).dump())


def _row(data: object) -> IndexRow | None:
    """A line's row, when it is one (a row okstra wrote has exactly these types)."""
    if type(data) is not dict:
        return None
    run, workers = data.get("run"), data.get("workers")
    if type(run) is not str or type(workers) is not dict or not _RUN_PATH.fullmatch(run):
        return None
    run_id, task_key, task_type = data.get("runId"), data.get("taskKey"), data.get("taskType")
    size, lead = data.get("teamSize"), data.get("leadStatus")
    if not (type(run_id) is type(task_key) is type(task_type) is type(lead) is str):
        return None
    if type(size) is not int or not all(type(v) is str for v in workers.values()):
        return None
    return IndexRow(
        run=run,
        run_id=run_id,
        task_key=task_key,
        task_type=task_type,
        created_at=_str(data.get("createdAt")),
        team_size=size,
        lead_status=lead,
        lead_backend=_str(data.get("leadBackend")),
        workers=workers,
        updated_at=_str(data.get("updatedAt")),
    )


def _records(data: bytes) -> list[object]:
    """Every line's JSON value; a damaged line is None (the rest still count)."""
    lines = [line for line in data.split(b"\n") if line.strip()]
    try:
        # One parse for the whole file: a file of whole lines is a JSON array's items.
        found: list[object] = orjson.loads(b"[" + b",".join(lines) + b"]")
        if len(found) == len(lines):
            return found
    except orjson.JSONDecodeError:
        pass
    out: list[object] = []
    for line in lines:
        try:
            out.append(orjson.loads(line))
        except orjson.JSONDecodeError:
            out.append(None)
    return out


def _read(path: Path) -> tuple[dict[str, IndexRow], int]:
    """(rows by run, number of lines) of the index file (absent: empty)."""
    if not os.path.lexists(path):
        return {}, 0
    records = _records(read_bytes(path, what="runs index", follow=False, limit=MAX_INDEX_BYTES))
    rows: dict[str, IndexRow] = {}
    for record in records:
        row = _row(record)
        if row is not None:
            rows[row.run] = row
    return rows, len(records)


def run_dirs(project_root: Path) -> Iterator[str]:
    """`<group>/<task>/runs/<run-id>` of every run directory (named as okstra names them)."""
    tasks = os.fspath(tasks_dir(project_root))
    for group in _scan(tasks):
        for task in _scan(os.path.join(tasks, group)):
            runs = os.path.join(tasks, group, task, "runs")
            for name in _scan(runs):
                if _RUN.fullmatch(name):
                    yield f"{group}/{task}/runs/{name}"


def _scan(directory: str) -> list[str]:
    try:
        with os.scandir(directory) as entries:
            return [
                e.name
                for e in entries
                if e.is_dir(follow_symlinks=False) and _SEGMENT.fullmatch(e.name)
            ]
    except OSError:
        return []


def _from_manifest(tasks: Path, run: str) -> IndexRow | None:
    """The row of a run the index does not know, from its manifest (None: no manifest)."""
    try:
        manifest = read_json(tasks / run / RUN_MANIFEST, what="run manifest", follow=False)
    except (OkstraError, OSError):
        return None
    return row_of(tasks / run, manifest) if isinstance(manifest, dict) else None


def rows(project_root: Path) -> list[IndexRow]:
    """Every run of the project, from the index (completed from the run directories)."""
    path = index_path(project_root)
    indexed, lines = _read(path)
    tasks = tasks_dir(project_root)
    found: dict[str, IndexRow] = {}
    missing: dict[str, IndexRow] = {}
    for run in run_dirs(project_root):
        row = indexed.get(run)
        if row is None and os.path.isfile(tasks / run / RUN_MANIFEST):
            row = _from_manifest(tasks, run)
            if row is not None:
                missing[run] = row
        if row is not None:
            found[run] = row
    if missing or lines > 2 * len(found) + 64:
        _rewrite(path, set(found), missing)
    return list(found.values())


def _rewrite(path: Path, present: set[str], missing: Mapping[str, IndexRow]) -> None:
    """Rewrite the index with one line per present run, adding the rows it missed (under
    the lock appends take, from the file as it is then: no line appended meanwhile is
    lost)."""
    with contextlib.suppress(OkstraError, OSError), FileLock(path, timeout=2.0):
        latest, _ = _read(path)
        merged = {**missing, **latest}
        body = b"".join(
            orjson.dumps(row.dump(), option=orjson.OPT_SORT_KEYS) + b"\n"
            for run, row in merged.items()
            if run in present and row is not None
        )
        atomic_write_bytes(path, body)
