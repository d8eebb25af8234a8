"""`okstra prepare` / `okstra report` through the installed command (subprocess)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.conftest import okstra_cmd


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "brief.md").write_text("Speed up the widget.\n", encoding="utf-8")
    return root


def run(args: list[str], cwd: Path, **env: str) -> tuple[int, dict[str, Any]]:
    # report roles prints a table unless asked for its JSON document.
    json_flag = ["--json"] if args[:2] == ["report", "roles"] else []
    proc = subprocess.run(
        [*okstra_cmd(), *args, *json_flag],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()
    return proc.returncode, orjson.loads(proc.stdout)


def base_args(project: Path) -> list[str]:
    return [
        "prepare",
        "--project-root",
        str(project),
        "--task-group",
        "perf",
        "--task-id",
        "widget",
        "--task-type",
        "requirements-discovery",
        "--brief",
        "brief.md",
        "--host",
        "terminal",
        "--role-count",
        "analyser=2",
    ]


def test_launch_none_end_to_end(project: Path, fake_path: Path, tmp_path: Path) -> None:
    log = tmp_path / "cli.log"
    code, doc = run([*base_args(project), "--launch", "none"], project, FAKE_CLI_LOG=str(log))
    assert code == 0, doc
    assert doc["ok"] is True and doc["runId"] == "requirements-discovery-001"
    assert doc["backend"] == "none" and doc["launch"] is None
    run_dir = Path(doc["runDir"])
    assert (run_dir / "run-manifest.json").is_file()
    # Only preflight probes ran (--version/--help); the lead itself was not started.
    calls = [orjson.loads(line) for line in log.read_text().splitlines()]
    assert calls and all(c["argv"] and c["argv"][0] in ("--version", "--help") for c in calls), (
        calls
    )

    code, roles = run(["report", "roles", str(run_dir)], project)
    assert code == 0 and roles["markdown"].count("role-exec-") == 4
    report = tmp_path / "final.json"
    report.write_bytes(orjson.dumps({"executionRoles": roles["executionRoles"]}))
    assert run(["report", "check", str(run_dir), str(report)], project)[0] == 0
    report.write_bytes(orjson.dumps({"executionRoles": roles["executionRoles"][:2]}))
    code, refused = run(["report", "roles", str(run_dir), "--report", str(report)], project)
    assert code == 2 and refused["ok"] is False and len(refused["missing"]) == 2


def test_exec_launch_runs_the_lead_cli_in_the_foreground(
    project: Path, fake_path: Path, tmp_path: Path
) -> None:
    log = tmp_path / "cli.log"
    code, doc = run([*base_args(project), "--launch", "exec"], project, FAKE_CLI_LOG=str(log))
    assert code == 0, doc
    calls = [orjson.loads(line) for line in log.read_text().splitlines()]
    lead = [c for c in calls if "--session-id" in c["argv"]]
    assert len(lead) == 1 and lead[0]["cli"] == "claude"
    assert doc["leadSessionId"] in lead[0]["argv"]
    assert str(Path(doc["leadPromptPath"])) in lead[0]["argv"]
    manifest = orjson.loads((Path(doc["runDir"]) / "run-manifest.json").read_bytes())
    leader = manifest["participants"][0]
    # okstra stayed the parent: the lead's exit (status 0) is recorded.
    assert leader["status"] == "exited" and leader["exitStatus"] == 0
    assert leader["sessionRef"] == doc["leadSessionId"]


def test_dry_run_and_errors(project: Path, fake_path: Path) -> None:
    code, doc = run([*base_args(project), "--dry-run", "--launch", "tmux"], project)
    assert code == 0 and doc["dryRun"] is True and doc["tmuxCommands"], doc
    assert not (project / ".okstra").exists()
    code, doc = run([*base_args(project), "--role-count", "analyser=2"], project)
    assert code == 2 and doc["ok"] is False
    assert not (project / ".okstra").exists()
    code, doc = run(["prepare", "--state", "x.json", "--task-id", "y"], project)
    assert code == 2 and "not both" in doc["error"]


def test_prepare_from_state_file(project: Path, fake_path: Path, tmp_path: Path) -> None:
    from okstra_core.environment import Environment
    from tests.prepare.test_prepare_pipeline import confirmed_wizard

    state = tmp_path / "wizard.json"
    confirmed_wizard(state, project, Environment(env=dict(os.environ)))
    code, doc = run(["prepare", "--state", str(state), "--launch", "none"], project)
    assert code == 0, doc
    assert doc["runId"].endswith("-001") and Path(doc["runDir"]).is_dir()
