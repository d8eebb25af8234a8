"""`okstra report`: execution roles table and the final-report check."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from okstra_core.errors import DataFileError
from okstra_core.report import (
    ReportMismatch,
    check_report,
    execution_roles,
    load_run_manifest,
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


def write_manifest(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    (run / "run-manifest.json").write_bytes(
        orjson.dumps(
            {
                "schemaVersion": "2.0",
                "executionIdentityVersion": 2,
                "executionManifest": {"roleExecutions": ROLES},
            }
        )
    )
    return run


def test_roles_table(tmp_path: Path) -> None:
    _, manifest = load_run_manifest(write_manifest(tmp_path))
    rows = execution_roles(manifest)
    table = roles_markdown(rows)
    assert table.splitlines()[0].startswith("| Role execution | Role |")
    assert "| role-exec-analyser-002 | analyser | 2 | codex/gpt-5.6-sol |" in table
    assert len(table.splitlines()) == 4


def test_report_check(tmp_path: Path) -> None:
    _, manifest = load_run_manifest(write_manifest(tmp_path))
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
        load_run_manifest(tmp_path)
