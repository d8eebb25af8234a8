"""The runs index of a project, `.okstra/runs-index.jsonl`: `okstra runs` reads one file.

Each change appends the run's row with its manifest's stamp; the last line per run wins.
Derived data: a row is trusted only while its real run directory's manifest has the
stamp, else remade from the manifest (appended, or the index rewritten under its lock)."""

from __future__ import annotations

import contextlib
import os
import stat
from collections import Counter
from collections.abc import Container, Mapping
from pathlib import Path
from typing import Any

from ..documents.run import Participant, RunManifest
from ..documents.worker import ProjectRunsRow
from ..errors import OkstraError
from ..names import is_name
from ..records import fields_of
from ..store import FileLock, append_line, atomic_write_bytes, file_kind, read_bytes, read_json
from ..tasks import OKSTRA_DIR, RUN_MANIFEST, TASKS_DIR
from .project import RUN_ID, RUNS_DIR, run_entries
from .report import read_run_manifest
from .runinfo import LEADER_KEYS, LEADER_REF
from .workers.team import members

INDEX_NAME = "runs-index.jsonl"
# Each row is small; a file this large is not an index okstra wrote.
MAX_INDEX_BYTES = 256 * 1024 * 1024
# More rows than this new or stale at once: the index is rewritten, not appended to.
_APPEND_AT_MOST = 64
_SETTLED_LEAD = frozenset(("prepared", "launch-failed", "exited", "stopped", "gone"))
# The longest text a listing shows of any leader field.
MAX_LEADER_TEXT = 4096


class IndexRow(ProjectRunsRow):
    """One run in the index (`documents.worker.ProjectRunsRow`), and what it says."""

    @property
    def settled(self) -> bool:
        """Nothing of the run can be running: the lead never launched or ended, no worker
        runs. Only a row with its leader, whose status is the row's, is settled."""
        leader, lead = self.leader, self.lead_status
        if leader is None or (leader.get("status") or "prepared") != lead:
            return False  # not a row okstra wrote: its manifest is read instead
        return lead in _SETTLED_LEAD and not self.worker_states.get("running")


# An entry and its run's row (None: no row to trust).
Listed = tuple[str, str, str, bool, IndexRow | None]


def _run_path(run: str) -> bool:
    """`<group>/<task>/runs/<run-id>`, the group and task under the one name rule."""
    parts = run.split("/")
    return len(parts) == 4 and _indexable(parts[0], parts[1], parts[3], {}) == run


def index_path(project_root: Path) -> Path:
    return project_root / OKSTRA_DIR / INDEX_NAME


def project_of(run_dir: Path) -> Path:
    """The project root of `<root>/.okstra/tasks/<group>/<task>/runs/<run-id>`."""
    return run_dir.parents[5]


def _relative(run_dir: Path) -> str:
    return "/".join(run_dir.parts[-4:])


def row_of(
    run_dir: Path, manifest: RunManifest, *, now: str | None = None, stamp: str | None = None
) -> IndexRow:
    """The run's row from its manifest; `stamp`: the manifest file's (`manifest_stamp`)."""
    team = members(manifest)
    lead = next((m.participant for m in team if m.leader), None)
    return IndexRow(
        run=_relative(run_dir),
        team_size=len(team),
        lead_status=lead.status if lead is not None else "prepared",
        lead_backend=lead.launch_backend if lead is not None else None,
        worker_states=dict(Counter(m.status for m in team if not m.leader)),
        updated_at=now,
        leader=_leader(lead),
        manifest_stamp=stamp,
        **fields_of(manifest, "run_id task_key task_type created_at entry_mode lead_session_id"),
    )


def _leader(lead: Participant | None) -> dict[str, Any] | None:
    """The leader's fields a listing reads (`LEADER_KEYS`); None (the run is then read from
    its manifest) without a leader or with a text longer than a listing shows."""
    if lead is None or lead.participant_ref != LEADER_REF:
        return None
    data = lead.dump()
    if any(isinstance(v, str) and len(v) > MAX_LEADER_TEXT for v in data.values()):
        return None
    return {k: data[k] for k in LEADER_KEYS if k in data}


def manifest_stamp(run_dir: Path | str) -> str | None:
    """`<mtime_ns>:<size>` of the run's manifest (None: not a regular file); every rewrite
    is a new file renamed in place, so a changed manifest has a new stamp."""
    return _stamp(os.path.join(run_dir, RUN_MANIFEST))


def _stamp(manifest: str) -> str | None:
    try:
        st = os.lstat(manifest)
    except OSError:
        return None
    return f"{st.st_mtime_ns}:{st.st_size}" if stat.S_ISREG(st.st_mode) else None


def note(run_dir: Path, manifest: RunManifest, *, now: str | None = None) -> None:
    """Append the run's row as `manifest`, just written, has it (best effort)."""
    with contextlib.suppress(OkstraError, OSError, IndexError):
        row = row_of(run_dir, manifest, now=now, stamp=manifest_stamp(run_dir))
        append_line(index_path(project_of(run_dir)), row.dump())


def _read(path: Path) -> tuple[dict[str, IndexRow], int, int]:
    """(the last row of each run, number of lines, lines that are no row) of the index."""
    if not os.path.lexists(path) or special(path) is not None:
        return {}, 0, 0
    data = read_bytes(path, what="runs index", follow=False, limit=MAX_INDEX_BYTES)
    rows = [IndexRow.from_line(line) for line in data.split(b"\n") if line.strip()]
    found = {row.run: row for row in rows if row is not None}
    return found, len(rows), sum(row is None for row in rows)


def special(path: Path) -> str | None:
    """Why an index that is no regular file is ignored (never read nor written), else None."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISREG(st.st_mode):
        return None
    return (
        f"{path} is {file_kind(st.st_mode)}, not a regular file: ignored, the runs are "
        "listed from their directories"
    )


def note_of(project_root: Path) -> str | None:
    """What a listing says about the project's index (`special`), or None."""
    return special(index_path(project_root))


def _from_manifest(tasks: Path, run: str) -> IndexRow | None:
    """A run's row from its manifest (None: none, or not a JSON object); a manifest its
    model refuses gives a row without the leader (never settled: the listing reads it)."""
    run_dir = tasks / run
    stamp = manifest_stamp(run_dir)  # before reading: a change meanwhile is seen next time
    try:
        _, manifest = read_run_manifest(run_dir)
    except (OkstraError, OSError):
        try:
            loose = read_json(run_dir / RUN_MANIFEST, what="run manifest", follow=False)
        except (OkstraError, OSError):
            return None
        if not isinstance(loose, dict):
            return None
        return _unread(run_dir, stamp)
    return row_of(run_dir, manifest, stamp=stamp)


def _unread(run_dir: Path, stamp: str | None) -> IndexRow:
    """The row of a run whose manifest its model refuses: what its path says, no leader."""
    return IndexRow(
        run=_relative(run_dir),
        run_id=run_dir.name,
        task_key=f"{run_dir.parent.parent.parent.name}/{run_dir.parent.parent.name}",
        task_type="",
        created_at=None,
        team_size=0,
        lead_status="prepared",
        lead_backend=None,
        worker_states={},
        manifest_stamp=stamp,
    )


def rows(project_root: Path) -> list[IndexRow]:
    """Every run of the project the index has a row of (see `listing`)."""
    return [row for *_, row in listing(project_root) if row is not None]


def listing(project_root: Path) -> list[Listed]:
    """Every entry of the project's `runs/` directories, with its run's row when one can
    be trusted (else None: the listing reads the run itself); new rows are written."""
    path = index_path(project_root)
    indexed, lines, bad = _read(path)
    tasks = os.path.join(project_root, OKSTRA_DIR, TASKS_DIR)
    names: dict[str, bool] = {}
    found: dict[str, IndexRow] = {}
    fresh: dict[str, IndexRow] = {}
    out: list[Listed] = []
    for group, task, name, real in run_entries(project_root):
        run = _indexable(group, task, name, names) if real else None
        row = None if run is None else _trusted(tasks, run, indexed, fresh)
        if run is not None and row is not None:
            found[run] = row
        out.append((group, task, name, real, row))
    # A line naming no run path at all makes the index rebuilt (a removed run's is kept).
    bad += any(not _run_path(run) for run in indexed.keys() - found.keys())
    if special(path) is not None:
        pass  # never written to (`special`)
    elif bad or len(fresh) > _APPEND_AT_MOST or lines > 2 * len(found) + 64:
        _rewrite(path, found, fresh, indexed)
    else:
        # A few new rows (runs prepared since): appended, not the whole file rewritten.
        for row in fresh.values():
            with contextlib.suppress(OkstraError, OSError):
                append_line(path, row.dump())
    return out


def _indexable(group: str, task: str, name: str, names: dict[str, bool]) -> str | None:
    """The run path of a run directory the index can name; `names` caches the name rule."""
    if RUN_ID.fullmatch(name) is None:
        return None
    for part in (group, task):
        ok = names.get(part)
        if ok is None:
            ok = names[part] = is_name(part)
        if not ok:
            return None
    return f"{group}/{task}/{RUNS_DIR}/{name}"


def _trusted(
    tasks: str, run: str, indexed: Mapping[str, IndexRow], fresh: dict[str, IndexRow]
) -> IndexRow | None:
    """The run's row when its manifest still has its stamp, else one made from its manifest
    (added to `fresh`); None when there is none."""
    row = indexed.get(run)
    stamp = row.manifest_stamp if row is not None else None
    if stamp is not None and stamp == _stamp(f"{tasks}/{run}/{RUN_MANIFEST}"):
        return row
    row = _from_manifest(Path(tasks), run)
    if row is not None:
        fresh[run] = row
    return row


def _rewrite(
    path: Path, present: Container[str], fresh: Mapping[str, IndexRow], seen: Mapping[str, IndexRow]
) -> None:
    """Rewrite the index with one line per present run, `fresh` rows in place of what was
    `seen` (under the lock, from the file as it is then: a newer line appended is kept)."""
    with contextlib.suppress(OkstraError, OSError), FileLock(path, timeout=2.0):
        latest, _, _ = _read(path)
        merged = {run: row for run, row in latest.items() if run in present}
        for run, row in fresh.items():
            if latest.get(run) == seen.get(run):  # nothing newer appended meanwhile
                merged[run] = row
        atomic_write_bytes(path, b"".join(row.jsonl() for row in merged.values()))
