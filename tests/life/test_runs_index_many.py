"""`okstra runs` over many runs: the newest `--limit` are exactly the first rows of the
whole listing (runs created in the same second told apart by when their inputs were
written, then by path), and the index's lines are read as data — one parse of the
whole file when it is whole, line by line when it is not."""

from __future__ import annotations

import json
import os
import shutil
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from life_support import base_env, make_fake_clis, okstra_json, prepare_args

from okstra_core.life import index

RUNS = 36


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A project of one prepared run and `RUNS` copies of it: most created in the same
    second, a few a second later; inputs written at chosen times, some equal."""
    tmp = tmp_path_factory.mktemp("many")
    project = tmp / "proj"
    project.mkdir()
    (project / "brief.md").write_text("Speed up the widget.\n", encoding="utf-8")
    env = base_env(make_fake_clis(tmp / "bin"), tmp, OKSTRA_HOME=str(tmp / "home"))
    code, doc = okstra_json(prepare_args(project, "none", task_id="origin"), cwd=project, env=env)
    assert code == 0, doc
    source = json.loads((Path(doc["runDir"]) / "run-manifest.json").read_bytes())
    tasks = project / ".okstra" / "tasks"
    for n in range(RUNS):
        run_dir = tasks / "perf" / f"t{n % 4}" / "runs" / f"requirements-discovery-{n + 1:03d}"
        run_dir.mkdir(parents=True)
        manifest = {**source, "runId": run_dir.name, "taskKey": f"perf/t{n % 4}"}
        manifest["createdAt"] = f"2026-11-30T12:00:0{1 if n % 9 == 0 else 0}+00:00"
        (run_dir / "run-manifest.json").write_bytes(json.dumps(manifest).encode())
        inputs = run_dir / "run-inputs.json"
        inputs.write_bytes(b"{}")
        written = 1_800_000_000_000_000_000 + (n % 5) * 1_000_000
        os.utime(inputs, ns=(written, written))
    return {"project": project, "env": env, "tasks": tasks}


def listed(world: dict[str, Any], *limit: str) -> dict[str, Any]:
    args = ["runs", "--json", *(("--limit", *limit) if limit else ())]
    code, doc = okstra_json(args, cwd=world["project"], env=world["env"])
    assert code == 0, doc
    return doc


def expected_order(world: dict[str, Any]) -> list[str]:
    """Newest first: creation time, then when the inputs were written, then the path."""

    def key(run_dir: Path) -> tuple[float, int, str]:
        manifest = json.loads((run_dir / "run-manifest.json").read_bytes())
        created = datetime.fromisoformat(manifest["createdAt"]).timestamp()
        return (created, os.lstat(run_dir / "run-inputs.json").st_mtime_ns, str(run_dir))

    run_dirs = [p.parent for p in world["tasks"].glob("*/*/runs/*/run-manifest.json")]
    return [str(p) for p in sorted(run_dirs, key=key, reverse=True)]


def test_the_newest_runs_are_the_first_rows_of_the_whole_listing(many: dict[str, Any]) -> None:
    whole = listed(many, "0")
    order = [row["runDir"] for row in whole["runs"]]
    assert whole["total"] == RUNS + 1 and whole["more"] == 0
    assert order == expected_order(many)
    assert all(row["runState"] == "ok" for row in whole["runs"])
    # The index is built now: every settled run below is shown from it.
    for limit in (1, 4, 7, RUNS, RUNS + 1):
        doc = listed(many, str(limit))
        assert [row["runDir"] for row in doc["runs"]] == order[:limit], limit
        assert (doc["total"], doc["more"]) == (RUNS + 1, RUNS + 1 - limit)
        assert without_age(doc) == without_age(whole)[:limit]


@pytest.fixture
def copy(many: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    project = tmp_path / "proj"
    shutil.copytree(many["project"], project, symlinks=True)
    listed({**many, "project": project})  # the index built
    return {**many, "project": project, "tasks": project / ".okstra" / "tasks"}


def without_age(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [{**row, "ageSeconds": None} for row in doc["runs"]]


def test_a_line_for_a_removed_run_is_kept_until_the_index_is_compacted(copy: dict) -> None:
    path = index.index_path(copy["project"])
    first = without_age(listed(copy, "0"))
    lines = path.read_bytes().splitlines()
    ghost = {**orjson.loads(lines[0]), "run": "perf/gone/runs/requirements-discovery-001"}
    path.write_bytes(path.read_bytes() + orjson.dumps(ghost) + b"\n")
    assert without_age(listed(copy, "0")) == first
    # A well-formed line of a run that is not there is not damage: the file is kept.
    assert path.read_bytes().splitlines() == [*lines, orjson.dumps(ghost)]


@pytest.mark.parametrize(
    "run",
    ["../../../etc/runs/requirements-discovery-001", "perf/t0/runs/../../t1", "perf/t0/runs"],
)
def test_a_line_naming_no_run_path_has_the_index_rebuilt(copy: dict, run: str) -> None:
    path = index.index_path(copy["project"])
    first = without_age(listed(copy, "0"))
    line = {**orjson.loads(path.read_bytes().splitlines()[0]), "run": run}
    path.write_bytes(path.read_bytes() + orjson.dumps(line) + b"\n")
    assert without_age(listed(copy, "0")) == first
    kept = [orjson.loads(x) for x in path.read_bytes().splitlines()]
    assert len(kept) == RUNS + 1 and run not in {r["run"] for r in kept}


def test_runs_behind_a_linked_runs_directory_are_not_listed(copy: dict) -> None:
    """A task's `runs` that is a link is not this project's: its runs are not listed,
    and the index's lines for them are not used."""
    runs = copy["tasks"] / "perf" / "t2" / "runs"
    moved = copy["project"].parent / "elsewhere"
    runs.rename(moved)
    runs.symlink_to(moved, target_is_directory=True)
    doc = listed(copy, "0")
    assert doc["total"] == RUNS + 1 - RUNS // 4
    assert not [row for row in doc["runs"] if "/perf/t2/" in row["runDir"]]


def _row(n: int, worker: str = "exited", lead: str = "exited") -> index.IndexRow:
    return index.IndexRow(
        run=f"perf/t0/runs/requirements-discovery-00{n}",
        run_id=f"requirements-discovery-00{n}",
        task_key="perf/t0",
        task_type="requirements-discovery",
        created_at=None,
        team_size=3,
        lead_status="exited",
        lead_backend="tmux",
        worker_states={"exited": 1, worker: 1} if worker != "exited" else {"exited": 2},
        leader={"status": lead, "endDetail": 'a "quoted", \\ text'},
        manifest_stamp="1:2",
    )


@pytest.mark.parametrize(
    ("tail", "bad"),
    [
        (b"", 0),
        (b"\n\n  \n", 0),  # blank lines are no lines
        (b"1,2\n", 1),  # JSON, but no object
        (b"[]\r\n", 1),
        (b"\x00\xff\n", 1),
        (b'{"run": "perf/t0/runs/requirements-discovery-009", "runId": "x"', 1),  # torn
        # A row's field of another type (`teamSize` a text, a count a text), or missing
        # (`workerStates`; a line of an older index, with its workers by name).
        (_row(9).jsonl().replace(b'"teamSize":3', b'"teamSize":"3"'), 1),
        (_row(9).jsonl().replace(b'"exited":2', b'"exited":"2"'), 1),
        (_row(9).jsonl().replace(b',"workerStates":{', b',"workers":{'), 1),
    ],
)
def test_the_index_is_read_line_by_line(tmp_path: Path, tail: bytes, bad: int) -> None:
    """Each line is parsed on its own into its typed row; a line that is no row is
    counted and left out, the others still count."""
    path = tmp_path / "runs-index.jsonl"
    path.write_bytes(_row(1).jsonl() + _row(2, "running").jsonl() + tail)
    found, lines, damaged = index._read(path)
    assert damaged == bad
    assert lines == 2 + bad
    assert list(found.values()) == [_row(1), _row(2, "running")]


def test_a_row_is_settled_when_nothing_of_its_run_can_run() -> None:
    rows = [_row(1), _row(2, "running"), _row(3, lead="launched"), _row(4)]
    assert [row.settled for row in rows] == [True, False, False, True]
    # Read back from its line, a row is the row written.
    assert index.IndexRow.from_line(rows[1].jsonl().strip()) == rows[1]


def test_a_line_saying_a_worker_runs_has_its_manifest_read(copy: dict) -> None:
    path = index.index_path(copy["project"])
    lines = [orjson.loads(x) for x in path.read_bytes().splitlines()]
    target = lines[0]
    target["workerStates"] = {**target["workerStates"], "running": 1}
    path.write_bytes(b"".join(orjson.dumps(r, option=orjson.OPT_SORT_KEYS) + b"\n" for r in lines))
    manifest = copy["tasks"] / target["run"] / "run-manifest.json"
    before = os.lstat(manifest)
    manifest.write_bytes(b"x" * before.st_size)  # damaged, its stamp kept
    os.utime(manifest, ns=(before.st_atime_ns, before.st_mtime_ns))
    rows = {row["runDir"]: row for row in listed(copy, "0")["runs"]}
    row = rows[str(manifest.parent)]
    assert row["runState"] == "damaged" and "invalid JSON" in row["problem"]
    assert sum(r["runState"] == "ok" for r in rows.values()) == RUNS


def test_a_rebuilt_index_has_each_run_s_row_from_its_manifest(copy: dict) -> None:
    """Stale lines (a stamp no manifest has) and a damaged one: the index is rewritten
    with the rows made from the manifests, their workers counted by status."""
    path = index.index_path(copy["project"])
    lines = [orjson.loads(x) for x in path.read_bytes().splitlines()]
    stale = [{**line, "manifestStamp": "1:1"} for line in lines]
    body = b"".join(orjson.dumps(r, option=orjson.OPT_SORT_KEYS) + b"\n" for r in stale)
    path.write_bytes(body + b'{"run":5,"workerStates":{}}\n')  # a line that is no row
    listed(copy, "0")
    kept = {r["run"]: r for r in map(orjson.loads, path.read_bytes().splitlines())}
    assert kept == {line["run"]: line for line in lines}
    assert all(line["workerStates"] for line in kept.values())
