"""`okstra report`: execution roles table and the final-report check."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from okstra_core.errors import DataFileError
from okstra_core.life.report import (
    ReportMismatch,
    check_report,
    execution_roles,
    read_run_manifest,
    roles_markdown,
)

ROLES = [
    {
        "roleExecutionRef": "role-exec-leader-001",
        "role": "leader",
        "ordinal": 1,
        "provider": "claude",
        "modelRef": "claude/opus-4.6",
        "executionLabel": "leader#1 · claude/opus-4.6",
        "status": "prepared",
    },
    {
        "roleExecutionRef": "role-exec-analyser-002",
        "role": "analyser",
        "ordinal": 2,
        "provider": "codex",
        "modelRef": "codex/gpt-5.6-sol",
        "executionLabel": "analyser#2 · codex/gpt-5.6-sol",
        "status": "prepared",
    },
]


def _execution(row: dict[str, object]) -> dict[str, object]:
    return {
        **row,
        "participantRef": "participant-001",
        "dutyId": "duty",
        "modelId": str(row["modelRef"]).partition("/")[2],
        "displayName": str(row["modelRef"]),
        "execution": "x",
        "modelSpecDigest": "0" * 64,
        "binding": {"runner": "cli-wrapper", "hostRuntime": "terminal"},
        "provenance": "chosen",
    }


def manifest_doc(*, previous_layout: bool = False) -> dict[str, object]:
    """A run manifest of this version (or of the previous layout: identity nested)."""
    identity = {
        "participants": [
            {
                "participantRef": "participant-001",
                "role": "leader",
                "provider": "claude",
                "modelRef": "claude/opus-4.6",
                "modelId": "opus-4.6",
                "runner": "cli-wrapper",
                "hostRuntime": "terminal",
                "entryMode": "spawn-process",
            }
        ],
        "roleExecutions": [_execution(r) for r in ROLES],
        "dynamicRoles": [],
    }
    doc: dict[str, object] = {
        "schemaVersion": "2.0",
        "executionIdentityVersion": 2,
        "okstraVersion": "0.1.0",
        "createdAt": "2026-01-01T00:00:00+00:00",
        "runId": "requirements-discovery-001",
        "seq": 1,
        "taskType": "requirements-discovery",
        "projectId": "p",
        "projectRoot": "/p",
        "taskKey": "g/t",
        "taskGroup": "g",
        "taskId": "t",
        "hostRuntime": "terminal",
        "entryMode": "spawn-process",
        "brief": {"path": "brief.md", "sha256": "0" * 64},
        "paths": {},
    }
    if previous_layout:
        doc["executionManifest"] = {"entryMode": "spawn-process", **identity}
    else:
        doc.update(identity)
    return doc


def write_manifest(tmp_path: Path, *, previous_layout: bool = False) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    doc = manifest_doc(previous_layout=previous_layout)
    (run / "run-manifest.json").write_bytes(orjson.dumps(doc))
    return run


@pytest.mark.parametrize("previous_layout", [False, True])
def test_roles_table(tmp_path: Path, previous_layout: bool) -> None:
    _, manifest = read_run_manifest(write_manifest(tmp_path, previous_layout=previous_layout))
    rows = execution_roles(manifest)
    table = roles_markdown(rows)
    assert table.splitlines()[0].startswith("| Role execution | Role |")
    assert "| role-exec-analyser-002 | analyser | 2 | codex/gpt-5.6-sol |" in table
    assert len(table.splitlines()) == 4


def test_report_check(tmp_path: Path) -> None:
    _, manifest = read_run_manifest(write_manifest(tmp_path))
    report = tmp_path / "final-report.json"
    report.write_bytes(orjson.dumps({"executionRoles": list(reversed(ROLES))}))
    assert len(check_report(manifest, report)) == 2
    extra = {**ROLES[0], "roleExecutionRef": "role-exec-critic-001"}
    report.write_bytes(orjson.dumps({"executionRoles": [ROLES[0], extra]}))
    with pytest.raises(ReportMismatch) as info:
        check_report(manifest, report)
    assert info.value.missing == ["role-exec-analyser-002"]
    assert info.value.unexpected == ["role-exec-critic-001"]
    report.write_bytes(orjson.dumps({"executionRoles": [*ROLES, ROLES[1]]}))
    with pytest.raises(ReportMismatch, match="listed twice"):
        check_report(manifest, report)
    report.write_bytes(orjson.dumps({"roles": []}))
    with pytest.raises(DataFileError, match="executionRoles"):
        check_report(manifest, report)


def test_v1_manifest_is_refused(tmp_path: Path) -> None:
    (tmp_path / "run-manifest.json").write_bytes(orjson.dumps({"schemaVersion": "1.0"}))
    with pytest.raises(DataFileError, match="executionIdentityVersion"):
        read_run_manifest(tmp_path)


def test_previous_layout_is_upgraded_on_read(tmp_path: Path) -> None:
    data = read_run_manifest(write_manifest(tmp_path, previous_layout=True))[1].dump()
    assert "executionManifest" not in data
    assert [r["roleExecutionRef"] for r in data["roleExecutions"]] == [
        r["roleExecutionRef"] for r in ROLES
    ]
    assert data["participants"][0]["participantRef"] == "participant-001"


def test_malformed_manifest_names_the_field(tmp_path: Path) -> None:
    doc = manifest_doc()
    doc["roleExecutions"] = [{"roleExecutionRef": 1}]
    (tmp_path / "run-manifest.json").write_bytes(orjson.dumps(doc))
    with pytest.raises(DataFileError) as info:
        read_run_manifest(tmp_path)
    assert "roleExecutions[0].roleExecutionRef" in info.value.render()
