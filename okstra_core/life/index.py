"""The runs index of a project: `.okstra/runs-index.jsonl`, so `okstra runs` reads one
file instead of every run manifest.

Each change of a run's life appends one line — the run's row as it is now: prepared, the
lead launched or ended, a worker started or ended — with the leader participant and the
manifest's stamp (`<mtime_ns>:<size>`). Reading keeps the last line of each run, so a
torn line costs nothing but that line. The index is derived data: the manifests stay the
truth. The run directories are listed once (`project.run_entries`: a directory listing
and one `lstat` per manifest, no manifest read), and each line's shape is checked
without making an object (`listing`; a row object is made only for a run shown; a line's
workers are read only as far as telling whether one runs). A run the index does not
know, or whose manifest's stamp is not its row's (a stale row: a writer that died before
its line, an older okstra, an edit), gets its row from its manifest, read through its
model; a row whose run directory is gone is dropped. A few such rows are appended; a
missing or damaged index, or many rows at once, is rebuilt: rewritten (atomically, under
its lock) with one line per run — also when the file holds more than twice as many lines
as runs.

A line is data, never a command: its `run` must be a run path as okstra names them,
and it is used only for a run directory that exists, is a real directory (no link)
and whose manifest still has the row's stamp; every leader field is checked when the
lead is read (`life.runinfo`), as from a manifest.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import stat
from collections.abc import Container, Mapping
from pathlib import Path
from typing import Any

import orjson

from ..documents.worker import ProjectRunsRow
from ..errors import OkstraError
from ..names import is_name
from ..store import FileLock, append_line, atomic_write_bytes, file_kind, read_bytes, read_json
from ..tasks import OKSTRA_DIR, RUN_MANIFEST, TASKS_DIR
from .project import RUNS_DIR, run_entries
from .report import load_run_manifest
from .workers.team import members

INDEX_NAME = "runs-index.jsonl"
# Each row is small; a file this large is not an index okstra wrote.
MAX_INDEX_BYTES = 256 * 1024 * 1024
# More rows than this new or stale at once: the index is rewritten, not appended to.
_APPEND_AT_MOST = 64
_RUN = re.compile(r"^[a-z][a-z-]*[a-z]-\d+$")
_COMMAS = bytes.maketrans(b"\n", b",")
# How each line okstra writes ends (keys sorted): its workers, then the line's end.
_WORKERS = b',"workers":{'
_SETTLED_LEAD = frozenset(("prepared", "launch-failed", "exited", "stopped", "gone"))
LEADER_REF = "participant-001"
# The leader participant's keys the lead's reader checks (`life.runinfo._CHECKS`), and
# the longest text a listing shows of any of its fields.
LEADER_KEYS = (
    "status",
    "runner",
    "launchBackend",
    "sessionRef",
    "windowRef",
    "paneRef",
    "tmuxSocket",
    "processId",
    "processStart",
    "parentProcessId",
    "parentStart",
    "paneProcessId",
    "paneStart",
    "exitStatus",
    "exitSignal",
    "exitedAt",
    "endDetail",
    "stopRequestedAt",
)
MAX_LEADER_TEXT = 4096
# An entry and the checked line of its run's row (None: no row to trust).
Listed = tuple[str, str, str, bool, dict[str, Any] | None]


class IndexRow(ProjectRunsRow):
    """One run in the index (`documents.worker.ProjectRunsRow`), and what it says."""

    @property
    def settled(self) -> bool:
        """Nothing of the run can be running (see `settled`)."""
        return settled(
            {"leader": self.leader, "leadStatus": self.lead_status, "workers": self.workers}
        )


def settled(record: Mapping[str, Any]) -> bool:
    """Nothing of the run a checked line (`listing`) is the row of can be running: the
    lead never launched or ended, and no worker is running (a look at the run would
    find nothing new). Only a row with its leader, whose status is the row's, is
    settled."""
    leader, lead = record.get("leader"), record["leadStatus"]
    if leader is None or (leader.get("status") or "prepared") != lead:
        return False  # not a row okstra wrote: its manifest is read instead
    return lead in _SETTLED_LEAD and "running" not in record["workers"].values()


def _run_path(run: str) -> bool:
    """`<group>/<task>/runs/<run-id>`, the group and task under the one name rule."""
    parts = run.split("/")
    return (
        len(parts) == 4
        and is_name(parts[0])
        and is_name(parts[1])
        and parts[2] == "runs"
        and _RUN.fullmatch(parts[3]) is not None
    )


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


def row_of(
    run_dir: Path,
    manifest: Mapping[str, Any],
    *,
    now: str | None = None,
    stamp: str | None = None,
) -> IndexRow:
    """The run's row from its manifest (as JSON data); `stamp`: the manifest's
    (`manifest_stamp`) when `manifest` is what the file holds."""
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
        leader=_leader(manifest),
        entry_mode=_str(manifest.get("entryMode")),
        lead_session_id=_str(manifest.get("leadSessionId")),
        manifest_stamp=stamp,
    )


def _leader(manifest: Mapping[str, Any]) -> dict[str, Any] | None:
    """The leader participant's fields a listing reads (`LEADER_KEYS`), as the manifest
    has them; None (the run is then read from its manifest) when it has no leader, or
    one with a text longer than a listing shows (it is shown as the damage it is)."""
    participants = manifest.get("participants")
    for item in participants if isinstance(participants, list) else ():
        if isinstance(item, dict) and item.get("participantRef") == LEADER_REF:
            if any(isinstance(v, str) and len(v) > MAX_LEADER_TEXT for v in item.values()):
                return None
            return {k: item[k] for k in LEADER_KEYS if k in item}
    return None


def manifest_stamp(run_dir: Path | str) -> str | None:
    """`<mtime_ns>:<size>` of the run's manifest (None: not a regular file). Every
    rewrite is a new file renamed in place, so a changed manifest has a new stamp."""
    return _stamp(os.path.join(run_dir, RUN_MANIFEST))


def _stamp(manifest: str) -> str | None:
    try:
        st = os.lstat(manifest)
    except OSError:
        return None
    return f"{st.st_mtime_ns}:{st.st_size}" if stat.S_ISREG(st.st_mode) else None


def note(run_dir: Path, manifest: Mapping[str, Any], *, now: str | None = None) -> None:
    """Append the run's row as `manifest` has it now, just written (best effort: the
    index is derived)."""
    with contextlib.suppress(OkstraError, OSError, IndexError):
        row = row_of(run_dir, manifest, now=now, stamp=manifest_stamp(run_dir))
        append_line(index_path(project_of(run_dir)), row.dump())


def _checked(data: object) -> dict[str, Any] | None:
    """A line's JSON value when it is a row (a row okstra wrote has exactly these types),
    checked without making an object. Its `run` is checked where it is used: a line is
    used only for the run directory it names (`listing`), any other is checked then."""
    if type(data) is not dict:
        return None
    get = data.get
    run, workers, leader = get("run"), get("workers"), get("leader")
    if type(run) is not str or type(workers) is not dict:
        return None
    if not (type(get("runId")) is type(get("taskKey")) is type(get("taskType")) is str):
        return None
    if type(get("leadStatus")) is not str or type(get("teamSize")) is not int:
        return None
    if leader is not None and type(leader) is not dict:
        return None
    for value in workers.values():
        if type(value) is not str:
            return None
    return data


def as_row(record: Mapping[str, Any]) -> IndexRow:
    """The row of a checked line (`listing`)."""
    return IndexRow(
        run=record["run"],
        run_id=record["runId"],
        task_key=record["taskKey"],
        task_type=record["taskType"],
        created_at=_str(record.get("createdAt")),
        team_size=record["teamSize"],
        lead_status=record["leadStatus"],
        lead_backend=_str(record.get("leadBackend")),
        workers=record["workers"],
        updated_at=_str(record.get("updatedAt")),
        leader=record.get("leader"),
        entry_mode=_str(record.get("entryMode")),
        lead_session_id=_str(record.get("leadSessionId")),
        manifest_stamp=_str(record.get("manifestStamp")),
    )


def _records(data: bytes, *, workers: bool = True) -> list[object]:
    """Every line's JSON value; a damaged line is None (the rest still count). Without
    `workers`, each line's workers are read only as far as a listing needs (`_heads`)."""
    if not workers:
        heads = _heads(data)
        if heads is not None:
            return heads
    count = data.count(b"\n") + (not data.endswith(b"\n"))
    if data:
        # One parse for the whole file: a file of whole lines is a JSON array's items
        # (each line break a comma; a blank or damaged line fails it, and every line is
        # then parsed alone).
        array = (bytearray(b"[") + data).translate(_COMMAS)
        if data.endswith(b"\n"):
            array[-1] = ord("]")
        else:
            array += b"]"
        with contextlib.suppress(orjson.JSONDecodeError):
            found: list[object] = orjson.loads(array)
            if len(found) == count:
                return found
    out: list[object] = []
    for line in data.split(b"\n"):
        if line.strip():
            try:
                out.append(orjson.loads(line))
            except orjson.JSONDecodeError:
                out.append(None)
    return out


def _heads(data: bytes) -> list[object] | None:
    """Each line's JSON value, its `workers` read only as far as a listing needs —
    whether one is running — when every line ends as okstra writes it (keys sorted:
    `,"workers":{…}}` last); else None (every line is then parsed whole).

    A line with no `"running"` among its workers has `workers` `{}`: its workers are
    neither parsed nor checked (a team's workers are most of a line, and a listing only
    asks whether one runs); any other line is parsed whole."""
    lines = data.split(b"\n")
    if lines.pop() or not lines:
        return None  # a last line without its line break: torn
    heads: list[bytes] = []
    whole: list[int] = []
    for n, line in enumerate(lines):
        at = line.rfind(_WORKERS)
        if at < 0 or not line.endswith(b"}}"):
            return None
        if line.find(b'"running"', at) >= 0:
            whole.append(n)
        heads.append(line[:at])
    try:
        found: list[object] = orjson.loads(b"[" + b"},".join(heads) + b"}]")
    except orjson.JSONDecodeError:
        return None
    if len(found) != len(lines):
        return None
    for item in found:
        if type(item) is dict:
            item["workers"] = {}
    for n in whole:
        try:
            found[n] = orjson.loads(lines[n])
        except orjson.JSONDecodeError:
            found[n] = None
    return found


def _read(path: Path, *, workers: bool = True) -> tuple[dict[str, dict[str, Any]], int, int]:
    """(checked lines by run — the last of each, number of lines, lines that are no row)
    of the index file (absent: empty); `workers` as `_records`. A line's `run` is not
    checked yet (`_checked`)."""
    if not os.path.lexists(path) or special(path) is not None:
        return {}, 0, 0
    data = read_bytes(path, what="runs index", follow=False, limit=MAX_INDEX_BYTES)
    records = _records(data, workers=workers)
    found: dict[str, dict[str, Any]] = {}
    bad = 0
    for record in records:
        row = _checked(record)
        if row is None:
            bad += 1
        else:
            found[row["run"]] = row
    return found, len(records), bad


def special(path: Path) -> str | None:
    """Why the index file is not used, when it is not a regular file (a FIFO, a link,
    a directory, …): it is then ignored, never read nor written, and the runs are
    listed from their directories. None for a regular file or none at all."""
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
    """The row of a run the index does not know (or knows from an older manifest), from
    its manifest (None: no manifest, or not a JSON object). A manifest its model refuses
    still gives its row, without the leader: such a run is never settled, and the
    listing reads it itself and shows why."""
    run_dir = tasks / run
    stamp = manifest_stamp(run_dir)  # before reading: a change meanwhile is seen next time
    try:
        _, manifest = load_run_manifest(run_dir)
    except (OkstraError, OSError):
        try:
            loose = read_json(run_dir / RUN_MANIFEST, what="run manifest", follow=False)
        except (OkstraError, OSError):
            return None
        if not isinstance(loose, dict):
            return None
        return dataclasses.replace(row_of(run_dir, loose, stamp=stamp), leader=None)
    return row_of(run_dir, manifest, stamp=stamp)


def rows(project_root: Path) -> list[IndexRow]:
    """Every run of the project the index has a row of (see `listing`), its workers as
    the line has them."""
    entries = listing(project_root, workers=True)
    return [as_row(record) for *_, record in entries if record is not None]


def listing(project_root: Path, *, workers: bool = False) -> list[Listed]:
    """Every entry of the project's `runs/` directories (`project.run_entries`, listed
    once), each with its run's row when one can be trusted (else None: the listing reads
    the run itself) — as a checked line (`as_row` makes it a row). Unless `workers`, a
    line's workers are read only as far as telling whether one runs (`_heads`).

    A row is the index's line for a real run directory (named as okstra names them)
    whose manifest still has the line's stamp. A run the index does not know, or whose
    manifest changed since its row was made (its stamp differs), gets its row from its
    manifest, appended to the index (or the index rewritten). A run whose manifest
    cannot be read has no row.
    """
    path = index_path(project_root)
    indexed, lines, bad = _read(path, workers=workers)
    tasks = os.path.join(project_root, OKSTRA_DIR, TASKS_DIR)
    names: dict[str, bool] = {}
    found: dict[str, dict[str, Any]] = {}
    fresh: dict[str, IndexRow] = {}
    out: list[Listed] = []
    for group, task, name, real in run_entries(project_root):
        run = _indexable(group, task, name, names) if real else None
        record = None if run is None else _trusted(tasks, run, indexed, fresh)
        if run is not None and record is not None:
            found[run] = record
        out.append((group, task, name, real, record))
    # A line naming no run directory of the project: a run removed since (kept until
    # the index is compacted), or a line that is no row at all (the index is rebuilt).
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
    """The run path of a real run directory when the index can name it (the group and
    task under the one name rule, the run named as okstra names runs); `names` keeps
    what is known of each group and task name."""
    if _RUN.fullmatch(name) is None:
        return None
    for part in (group, task):
        ok = names.get(part)
        if ok is None:
            ok = names[part] = is_name(part)
        if not ok:
            return None
    return f"{group}/{task}/{RUNS_DIR}/{name}"


def _trusted(
    tasks: str, run: str, indexed: Mapping[str, dict[str, Any]], fresh: dict[str, IndexRow]
) -> dict[str, Any] | None:
    """The run's line when its manifest still has the line's stamp; else its row made
    from its manifest (added to `fresh`), as a line; None when there is none."""
    record = indexed.get(run)
    stamp = record.get("manifestStamp") if record is not None else None
    if type(stamp) is str and stamp and stamp == _stamp(f"{tasks}/{run}/{RUN_MANIFEST}"):
        return record
    row = _from_manifest(Path(tasks), run)
    if row is None:
        return None
    fresh[run] = row
    return row.dump()


def _rewrite(
    path: Path,
    present: Container[str],
    fresh: Mapping[str, IndexRow],
    seen: Mapping[str, Mapping[str, Any]],
) -> None:
    """Rewrite the index with one line per present run, `fresh` rows (of present runs)
    in place of what was `seen` (under the lock appends take, from the file as it is
    then: a line appended meanwhile is newer than what was read, and is kept). Each
    line is written as its row (keys okstra does not write are left out)."""
    with contextlib.suppress(OkstraError, OSError), FileLock(path, timeout=2.0):
        latest, _, _ = _read(path)
        merged = {run: as_row(record) for run, record in latest.items() if run in present}
        for run, row in fresh.items():
            if _same(latest.get(run), seen.get(run)):  # nothing newer appended meanwhile
                merged[run] = row
        body = b"".join(
            orjson.dumps(row.dump(), option=orjson.OPT_SORT_KEYS) + b"\n" for row in merged.values()
        )
        atomic_write_bytes(path, body)


def _same(line: Mapping[str, Any] | None, seen: Mapping[str, Any] | None) -> bool:
    """The same line as was seen, its workers aside (they may have been read only as
    far as a listing needs; every line okstra appends has a new manifest stamp)."""
    if line is None or seen is None:
        return line is seen
    return {**line, "workers": None} == {**seen, "workers": None}
