"""Third compatibility round: `run-inputs.json` carries the earlier okstra's keys and a
canonical argv that reruns the run with the same team, defaults included."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from compat2_support import labels, make_project, okstra


@pytest.fixture
def project(tmp_path: Path, fake_path: Path) -> Path:
    return make_project(tmp_path / "shop")


def _prepare(project: Path, *extra: str) -> dict[str, object]:
    payload, code, _ = okstra(
        "prepare", "--project-root", str(project), "--task-type", "error-analysis",
        "--brief", "docs/brief.md", "--task-group", "checkout", "--task-id", "chk-1",
        "--launch", "none", "--host", "codex", *extra,
    )  # fmt: skip
    assert code == 0, payload
    return payload


def test_run_inputs_has_the_earlier_keys_and_a_rerun_argv(project: Path) -> None:
    payload = _prepare(project)
    run_dir = Path(str(payload["runDir"]))
    inputs = orjson.loads((run_dir / "run-inputs.json").read_bytes())
    team = labels(payload)
    assert inputs["leadProvider"] == team["leader#1"].split("/")[0] == "codex"
    assert inputs["reportWriterModel"] == team["report-writer#1"]
    assert inputs["executor"] == ""  # no implementer in error-analysis
    assert inputs["taskBriefPath"] == "docs/brief.md"
    # Every resolved model is in the argv, the defaults okstra filled included.
    argv = inputs["argv"]
    for who, ref in team.items():
        assert f"--role-model={who.split('#')[0]}={ref}" in argv, (who, argv)
    rerun, code, _ = okstra("prepare", *argv, "--launch", "none", "--dry-run")
    assert code == 0, rerun
    assert labels(rerun) == team
    schema, code, _ = okstra("schema", "run-inputs")
    assert code == 0
    text = orjson.dumps(schema).decode()
    for key in ("leadProvider", "reportWriterModel", "executor", "taskBriefPath"):
        assert f'"{key}"' in text, key


def test_runs_index_lines_and_static_role_executions_say_what_the_earlier_wrote(
    project: Path, okstra_home: Path
) -> None:
    payload = _prepare(project)
    run_dir = Path(str(payload["runDir"]))
    manifest = orjson.loads((run_dir / "run-manifest.json").read_bytes())
    refs = [e["roleExecutionRef"] for e in manifest["roleExecutions"]]
    assert refs and all(e["sourceRoleExecutionRef"] is None for e in manifest["roleExecutions"])
    (index,) = okstra_home.rglob("runs.jsonl")
    rows = [orjson.loads(line) for line in index.read_bytes().splitlines()]
    row = next(r for r in rows if r["runDir"] == str(run_dir))
    assert row["roleExecutionRefs"] == refs
    schema, code, _ = okstra("schema", "runs-index")
    assert code == 0 and "roleExecutionRefs" in orjson.dumps(schema).decode()
