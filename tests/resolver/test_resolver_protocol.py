"""`okstra models` and `okstra team` through the installed command (subprocess)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import okstra_cmd

BUNDLED = ("claude", "antigravity", "codex", "grok", "kimi")

PROVIDER = """\
id = "{pid}"
display_label = "{pid}"
cli = "{pid}-cli"
roles = ["leader", "analyser", "critic", "report-writer"]

[launch]
version = ["{{cli}}", "--version"]
new = ["{{cli}}", "--session-id", "{{session_id}}", "--model", "{{model}}",
       "--prompt-file", "{{prompt_file}}"]
resume = ["{{cli}}", "--resume", "{{session_id}}"]

{models}
"""

MODEL = """\
[[models]]
id = "{mid}"
display = "{pid} {mid}"
execution = "{pid}-{mid}"
aliases = [{aliases}]
default_for = [{default_for}]
roles = [{roles}]
"""

PROFILE = """\
+++
task_type = "{task_type}"

{roles}
+++
# {task_type}
"""


def q(items: list[str]) -> str:
    return ", ".join(json.dumps(i) for i in items)


def write_provider(ws: Path, pid: str, models: list[dict[str, Any]]) -> None:
    body = "\n".join(
        MODEL.format(
            pid=pid,
            mid=m["id"],
            aliases=q(m.get("aliases", [])),
            default_for=q(m.get("default_for", [])),
            roles=q(m.get("roles", [])),
        )
        for m in models
    )
    (ws / "providers").mkdir(parents=True, exist_ok=True)
    (ws / "providers" / f"{pid}.toml").write_text(PROVIDER.format(pid=pid, models=body))


def write_profile(ws: Path, task_type: str, roles: str) -> None:
    (ws / "profiles").mkdir(parents=True, exist_ok=True)
    (ws / "profiles" / f"{task_type}.md").write_text(
        PROFILE.format(task_type=task_type, roles=roles)
    )


@pytest.fixture
def workspace(tmp_path: Path, okstra_home: Path) -> Path:
    ws = tmp_path / "ws"
    write_provider(
        ws,
        "alpha",
        [
            {"id": "a1", "aliases": ["first"], "default_for": ["leader", "analyser", "critic"]},
            {"id": "a2", "roles": ["analyser"]},
        ],
    )
    write_provider(ws, "beta", [{"id": "b1", "roles": ["analyser", "report-writer"]}])
    write_provider(ws, "gamma", [{"id": "g1", "default_for": ["analyser"]}])
    # Bundled providers stay in the registry; keep them out of the teams.
    config = okstra_home / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.json").write_text(json.dumps({"disabledProviders": list(BUNDLED)}))
    return ws


def run(args: list[str], ws: Path, path: Path, cwd: Path) -> tuple[int, dict[str, Any]]:
    env = {**os.environ, "OKSTRA_WORKSPACE": str(ws), "PATH": str(path)}
    # models and team print a table unless asked for their JSON document.
    json_flag = ["--json"] if args[0] in ("models", "team") else []
    proc = subprocess.run(
        [*okstra_cmd(), *args, *json_flag],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert "Traceback" not in proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def test_models_marks_exactly_the_missing_clis(
    workspace: Path, fake_bin: Callable[..., Path], tmp_path: Path
) -> None:
    bin_dir = fake_bin("alpha-cli", "gamma-cli")
    code, out = run(["models", "--host", "terminal"], workspace, bin_dir, tmp_path)
    assert code == 0 and out["ok"] is True, out
    assert out["host"] == "terminal" and out["availabilityFor"] == "any role the model supports"
    rows = {m["modelRef"]: m for m in out["models"]}
    assert rows["alpha/a1"]["available"] and rows["alpha/a1"]["reason"] is None
    assert rows["alpha/a1"]["aliases"] == ["first"]
    assert rows["gamma/g1"]["available"]
    assert rows["beta/b1"]["available"] is False
    assert rows["beta/b1"]["reason"] == "cli 'beta-cli' not found on PATH"
    for ref, row in rows.items():
        if ref.split("/")[0] in BUNDLED:
            assert row["available"] is False
            assert "is disabled in config" in row["reason"]


def test_models_for_a_role(workspace: Path, fake_bin: Callable[..., Path], tmp_path: Path) -> None:
    bin_dir = fake_bin("alpha-cli", "beta-cli", "gamma-cli")
    code, out = run(
        ["models", "--role", "leader", "--host", "terminal"], workspace, bin_dir, tmp_path
    )
    assert code == 0 and out["role"] == "leader"
    rows = {m["modelRef"]: m for m in out["models"]}
    assert rows["alpha/a1"]["available"]
    assert rows["alpha/a2"]["reason"] == "model alpha/a2 does not support role 'leader'"
    code, out = run(["models", "--role", "nobody"], workspace, bin_dir, tmp_path)
    assert code == 2 and "unknown role" in out["error"]


GREEDY_ROLES = """\
[[roles]]
role = "analyser"
duty = "cross-verification"
min = 2
max = 2

[[roles]]
role = "critic"
duty = "scope-critic"
min = 1
max = 1
exclude_models_of = ["analyser"]
"""


def test_team_solves_a_case_greedy_first_fit_cannot(
    workspace: Path, fake_bin: Callable[..., Path], tmp_path: Path
) -> None:
    # analyser#1's first default is alpha/a1, the only model the critic can run
    # (a2 and b1 are analyser-only; gamma's CLI is missing).
    write_profile(workspace, "greedy-trap", GREEDY_ROLES)
    bin_dir = fake_bin("alpha-cli", "beta-cli")
    code, out = run(
        [
            "team",
            "--task-type",
            "greedy-trap",
            "--host",
            "terminal",
            "--project-root",
            str(tmp_path),
        ],
        workspace,
        bin_dir,
        tmp_path,
    )
    assert code == 0, out
    team = {(t["role"], t["ordinal"]): t for t in out["team"]}
    assert team[("critic", 1)]["modelRef"] == "alpha/a1"
    assert {team[("analyser", 1)]["modelRef"], team[("analyser", 2)]["modelRef"]} == {
        "alpha/a2",
        "beta/b1",
    }
    assert team[("leader", 1)]["runner"] == "cli-wrapper"
    assert team[("leader", 1)]["hostModelValue"] is None
    assert team[("leader", 1)]["provenance"] == "default:bundled"
    assert out["dynamicRoles"] == []


def test_team_explains_an_infeasible_team_all_at_once(
    workspace: Path, fake_bin: Callable[..., Path], tmp_path: Path
) -> None:
    write_profile(
        workspace,
        "greedy-trap",
        GREEDY_ROLES.replace("min = 2\nmax = 2", 'min = 2\nmax = 2\ndistinct = "provider"'),
    )
    bin_dir = fake_bin("alpha-cli")
    code, out = run(
        [
            "team",
            "--task-type",
            "greedy-trap",
            "--host",
            "terminal",
            "--role-model",
            "critic=alpha/first",
        ],
        workspace,
        bin_dir,
        tmp_path,
    )
    assert code == 1 and out["ok"] is False
    assert out["constraints"] == ["analyser distinct-provider: required=2, available=1"]
    assert "analyser#1 beta/b1: cli 'beta-cli' not found on PATH" in out["candidates"]
    assert "analyser#1 gamma/g1: cli 'gamma-cli' not found on PATH" in out["candidates"]
    for line in out["candidates"] + out["constraints"]:
        assert line in out["error"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--role-count", "analyser"], "expected 'role=N'"),
        (["--role-count", "analyser=two"], "whole number"),
        (["--role-count", "critic=1", "--role-count", "critic=1"], "given twice"),
        (["--role-count", "analyser=3"], "between 2 and 2"),
        (["--role-count", "nobody=1"], "unknown role 'nobody'"),
        (["--role-model", "analyser=alpha/zzz"], "unknown model"),
        (["--role-model", "analyser"], "expected 'role=provider/model'"),
        (
            [
                "--role-model",
                "analyser=alpha/a1",
                "--role-model",
                "analyser=alpha/a2",
                "--role-model",
                "analyser=beta/b1",
            ],
            "count is 2",
        ),
        (["--entry-mode", "sideways"], "--entry-mode"),
        (["--entry-mode", "current-session"], "does not support entry mode"),
    ],
)
def test_team_usage_errors_exit_2(
    workspace: Path, fake_bin: Callable[..., Path], tmp_path: Path, args: list[str], message: str
) -> None:
    write_profile(workspace, "greedy-trap", GREEDY_ROLES)
    bin_dir = fake_bin("alpha-cli", "beta-cli")
    code, out = run(
        ["team", "--task-type", "greedy-trap", "--host", "terminal", *args],
        workspace,
        bin_dir,
        tmp_path,
    )
    assert code == 2, out
    assert out["ok"] is False and message in out["error"]
