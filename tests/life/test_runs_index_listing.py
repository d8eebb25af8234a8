"""`okstra runs` reads the project's runs index: a settled run's row comes from the index
without its manifest being opened; an unsettled run is read; a missing, damaged or stale
index is rebuilt from the run directories."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from life_support import base_env, make_fake_clis, okstra, okstra_json, prepare_args, set_lead

from okstra_core.life import index
from okstra_core.life.runinfo import _CHECKS


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A project with a run whose lead exited 3 (settled) and one never launched."""
    tmp = tmp_path_factory.mktemp("index")
    project = tmp / "proj"
    project.mkdir()
    (project / "brief.md").write_text("Speed up the widget.\n", encoding="utf-8")
    env = base_env(make_fake_clis(tmp / "bin"), tmp, OKSTRA_HOME=str(tmp / "home"))
    set_lead(tmp / "lead.json", delay=0, exit=3)
    # The foreground lead prints after okstra's JSON document.
    proc = okstra(prepare_args(project, "exec", task_id="ended"), cwd=project, env=env)
    ended, _ = json.JSONDecoder().raw_decode(proc.stdout.decode())
    assert proc.returncode == 3, ended
    code, fresh = okstra_json(prepare_args(project, "none", task_id="fresh"), cwd=project, env=env)
    assert code == 0, fresh
    return {"project": project, "env": env, "ended": Path(ended["runDir"]), "tmp": tmp}


@pytest.fixture
def project(world: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    """A copy of the world's project (each test damages its own)."""
    copy = tmp_path / "proj"
    shutil.copytree(world["project"], copy, symlinks=True)
    ended = copy / world["ended"].relative_to(world["project"])
    return {**world, "project": copy, "ended": ended}


def runs(world: dict[str, Any]) -> dict[str, dict[str, Any]]:
    code, doc = okstra_json(["runs", "--json"], cwd=world["project"], env=world["env"])
    assert code == 0, doc
    # Everything but the age, which grows between two listings.
    return {row["taskKey"]: {**row, "ageSeconds": None} for row in doc["runs"]}


def same_stamp_garbage(manifest: Path) -> None:
    """Damage the manifest keeping its size and times: its stamp is unchanged."""
    before = os.lstat(manifest)
    manifest.write_bytes(b"x" * before.st_size)
    os.utime(manifest, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert index.manifest_stamp(manifest.parent) == f"{before.st_mtime_ns}:{before.st_size}"


def test_a_settled_run_is_listed_from_the_index_without_its_manifest(project: dict) -> None:
    first = runs(project)
    assert first["perf/ended"]["leadStatus"] == "exited 3"
    assert first["perf/fresh"]["leadStatus"] == "prepared"
    assert index.index_path(project["project"]).exists()
    manifest = project["ended"] / "run-manifest.json"
    same_stamp_garbage(manifest)
    # The listing does not open the settled run's manifest: its row is the indexed one,
    # exactly as it was.
    assert runs(project) == first
    # The run itself, named, is read: its manifest is damaged.
    code, doc = okstra_json(
        ["status", str(project["ended"]), "--json"], cwd=project["project"], env=project["env"]
    )
    assert code == 0 and doc["runState"] == "damaged" and "invalid JSON" in doc["problem"]
    # A manifest changed since its row was made (a new stamp) makes the row stale: the
    # listing reads the manifest again.
    os.utime(manifest, ns=(1, 1))
    again = runs(project)
    assert again["perf/ended"]["runState"] == "damaged"
    assert again["perf/fresh"] == first["perf/fresh"]


def test_an_unsettled_run_is_read_from_its_manifest(project: dict) -> None:
    runs(project)
    path = index.index_path(project["project"])
    rows = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    # The index says the lead of `ended` was launched and runs (it is not settled).
    for row in rows:
        if row["taskKey"] == "perf/ended":
            row["leadStatus"] = row["leader"]["status"] = "launched"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    same_stamp_garbage(project["ended"] / "run-manifest.json")
    listed = runs(project)
    assert listed["perf/ended"]["runState"] == "damaged"  # its manifest was read
    assert "invalid JSON" in listed["perf/ended"]["problem"]


@pytest.mark.parametrize("how", ["deleted", "damaged", "planted"])
def test_a_missing_or_damaged_index_is_rebuilt(project: dict, how: str) -> None:
    first = runs(project)
    path = index.index_path(project["project"])
    if how == "deleted":
        path.unlink()
    elif how == "damaged":
        path.write_bytes(b'{"run": 1}\n\x00\xff not json\n[]\n')
    else:
        # Lines for runs that are not there, or lie about one that is: data, never trusted.
        ended = next(orjson.loads(x) for x in path.read_bytes().splitlines() if b"ended" in x)
        lie = {**ended, "manifestStamp": "1:1", "leadStatus": "stopped"}
        lie["leader"] = {**ended["leader"], "status": "stopped"}
        ghost = {**ended, "run": "perf/ghost/runs/requirements-discovery-001"}
        escape = {**ended, "run": "../../../etc/runs/requirements-discovery-001"}
        planted = b"".join(orjson.dumps(r) + b"\n" for r in (lie, ghost, escape))
        path.write_bytes(path.read_bytes() + planted)
    assert runs(project) == first
    kept = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    assert sorted(r["taskKey"] for r in kept) == ["perf/ended", "perf/fresh"]
    assert all(r["manifestStamp"] and r["leader"] for r in kept)


def test_a_run_directory_behind_a_link_is_never_taken_from_the_index(project: dict) -> None:
    runs(project)
    ended = project["ended"]
    moved = project["project"].parent / "elsewhere"
    ended.rename(moved)
    ended.symlink_to(moved, target_is_directory=True)
    listed = runs(project)
    assert listed["perf/ended"]["runState"] == "damaged"
    assert "symbolic link" in listed["perf/ended"]["problem"]


def test_the_index_keeps_the_leader_keys_the_reader_checks() -> None:
    assert set(index.LEADER_KEYS) == {key for key, _ in _CHECKS.values()}


def test_the_limit_lists_the_newest_runs_and_counts_the_rest(world: dict[str, Any]) -> None:
    every = ["runs", "--json", "--limit", "0"]
    code, whole = okstra_json(every, cwd=world["project"], env=world["env"])
    assert code == 0 and whole["total"] == 2 and whole["more"] == 0, whole
    code, newest = okstra_json([*every[:2], "--limit", "1"], cwd=world["project"], env=world["env"])
    assert code == 0, newest
    assert [r["runDir"] for r in newest["runs"]] == [whole["runs"][0]["runDir"]]
    assert (newest["total"], newest["more"]) == (2, 1)
    shown = okstra(["runs", "--limit", "1"], cwd=world["project"], env=world["env"])
    assert "1 older run not shown" in shown.stdout.decode()


def test_a_bad_limit_is_a_usage_error(world: dict[str, Any]) -> None:
    proc = okstra(["runs", "--limit", "-3"], cwd=world["project"], env=world["env"])
    assert proc.returncode == 2
    assert "--limit" in proc.stderr.decode() and "whole number" in proc.stderr.decode()
