"""Run files: immutability, sequence allocation under concurrency, task manifest rules."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from okstra_core.errors import PrepareError
from okstra_core.prepare.runfiles import (
    allocate_run_dir,
    build_project_json,
    build_task_manifest,
    peek_next_sequence,
    task_lock,
    write_immutable,
)
from okstra_core.store import dumps_json


def test_write_immutable_refuses_different_content(tmp_path: Path) -> None:
    path = tmp_path / "run-inputs.json"
    assert write_immutable(path, dumps_json({"a": 1})) is True
    assert (path.stat().st_mode & 0o777) == 0o600
    # Same inputs (even formatted differently): accepted, file untouched.
    assert write_immutable(path, b'{"a":1}') is False
    with pytest.raises(PrepareError, match="immutable"):
        write_immutable(path, dumps_json({"a": 2}))
    assert orjson.loads(path.read_bytes()) == {"a": 1}


def test_allocation_skips_taken_numbers(tmp_path: Path) -> None:
    (tmp_path / "runs" / "implementation-002").mkdir(parents=True)
    (tmp_path / "runs" / "error-analysis-007").mkdir()
    assert peek_next_sequence(tmp_path, "implementation") == 3
    with task_lock(tmp_path):
        assert allocate_run_dir(tmp_path, "implementation")[0] == 3
        assert allocate_run_dir(tmp_path, "implementation")[0] == 4
        assert allocate_run_dir(tmp_path, "error-analysis")[0] == 8


ALLOCATOR = """
import sys
from pathlib import Path
from okstra_core.prepare.runfiles import allocate_run_dir, task_lock
root = Path(sys.argv[1])
for _ in range(5):
    with task_lock(root):
        seq, _ = allocate_run_dir(root, "implementation")
    print(seq, flush=True)
"""


def test_concurrent_processes_get_distinct_numbers(tmp_path: Path) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", ALLOCATOR, str(tmp_path)], stdout=subprocess.PIPE, text=True
        )
        for _ in range(4)
    ]
    numbers: list[int] = []
    for p in procs:
        out, _ = p.communicate(timeout=60)
        assert p.returncode == 0
        numbers += [int(x) for x in out.split()]
    assert sorted(numbers) == list(range(1, 21))


def _index(run: str) -> list[dict[str, str]]:
    return [{"runId": run, "roleExecutionRef": "role-exec-leader-001"}]


def test_task_manifest_appends_index_and_lowers_ready_pointer() -> None:
    existing = {
        "customKey": {"kept": True},
        "createdAt": "2020-01-01T00:00:00+00:00",
        "roleExecutionIndex": _index("implementation-001"),
        "workflow": {
            "currentPhase": "implementation-planning",
            "currentPhaseState": "completed",
            "phaseStates": {"implementation-planning": "completed"},
            "lastCompletedPhase": "implementation-planning",
            "nextRecommendedPhase": {
                "phase": "final-verification",
                "status": "ready",
                "rationale": "tests pass",
            },
            "awaitingApproval": True,
        },
    }
    out = build_task_manifest(
        existing,
        identity={"taskKey": "g/t"},
        task_type="implementation",
        run={"runId": "implementation-002"},
        index_entries=_index("implementation-002"),
        now="2021-01-01T00:00:00+00:00",
    )
    assert out["schemaVersion"] == "2.0" and out["executionIdentityVersion"] == 2
    assert out["customKey"] == {"kept": True}
    assert out["createdAt"] == "2020-01-01T00:00:00+00:00"
    assert [e["runId"] for e in out["roleExecutionIndex"]] == [
        "implementation-001",
        "implementation-002",
    ]
    wf = out["workflow"]
    assert wf["currentPhase"] == "implementation" and wf["currentPhaseState"] == "prepared"
    assert wf["phaseStates"] == {
        "implementation-planning": "completed",
        "implementation": "prepared",
    }
    assert wf["nextRecommendedPhase"] == {
        "phase": "final-verification",
        "status": "pending",
        "rationale": "tests pass",
    }
    assert wf["lastCompletedPhase"] == "implementation-planning"
    assert wf["awaitingApproval"] is True
    assert out["latestRunByTaskType"] == {"implementation": "implementation-002"}
    # The input was not mutated (the old manifest is still what was read).
    assert len(existing["roleExecutionIndex"]) == 1


@pytest.mark.parametrize(
    ("stored", "expected"),
    [
        ("release-handoff", {"phase": "release-handoff", "status": "pending", "rationale": ""}),
        (None, {"phase": "", "status": "pending", "rationale": ""}),
        (
            {"phase": "x", "status": "blocked", "rationale": "needs a human"},
            {"phase": "x", "status": "blocked", "rationale": "needs a human"},
        ),
    ],
)
def test_pointer_promotion(stored: object, expected: dict[str, str]) -> None:
    existing = {"workflow": {"nextRecommendedPhase": stored}} if stored is not None else None
    out = build_task_manifest(
        existing,
        identity={},
        task_type="implementation",
        run={"runId": "implementation-001"},
        index_entries=[],
        now="t",
    )
    assert out["workflow"]["nextRecommendedPhase"] == expected


def test_project_json_upsert_keeps_unknown_keys(tmp_path: Path) -> None:
    existing = {"projectId": "mine", "modelDefaults": {"leader": ["claude/opus-4.6"]}, "x": 1}
    out = build_project_json(
        existing,
        project_id="other",
        project_root=tmp_path,
        task_key="g/t",
        run_id="implementation-001",
        task_type="implementation",
        now="t",
    )
    assert out["projectId"] == "mine"
    assert out["modelDefaults"] == {"leader": ["claude/opus-4.6"]} and out["x"] == 1
    assert out["tasks"]["g/t"]["lastRunId"] == "implementation-001"
