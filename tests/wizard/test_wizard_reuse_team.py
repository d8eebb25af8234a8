"""Reusing a previous run restores its whole team (defaults included), its directive
and its related tasks, each answer `reused:<run>` and checked again now."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "legacy"))
from compat2_support import make_project, okstra
from legacy_support import FAKE_HELP

RUN = "error-analysis-001"


def _prepare(project: Path, group: str, task: str, *extra: str) -> dict[str, Any]:
    payload, code, stderr = okstra(
        "prepare",
        "--project-root",
        str(project),
        "--task-type",
        "error-analysis",
        "--brief",
        "docs/brief.md",
        "--task-group",
        group,
        "--task-id",
        task,
        "--host",
        "terminal",
        "--launch",
        "none",
        *extra,
        env={"FAKE_CLI_HELP": FAKE_HELP},
    )
    assert code == 0, (payload, stderr)
    return payload


@pytest.fixture
def project(tmp_path: Path, fake_path: Path) -> Path:
    root = make_project(tmp_path / "shop")
    _prepare(root, "other", "t0")
    _prepare(
        root,
        "checkout",
        "chk-1",
        "--directive",
        "look at the cart",
        "--related-tasks",
        "other/t0",
        "--role-count",
        "critic=1",
    )
    return root


def _step(state: Path, answer: str, **env: str) -> dict[str, Any]:
    moved, code, _ = okstra("wizard", "step", "--state", str(state), "--answer", answer, env=env)
    assert code == 0 and moved["ok"], moved
    return moved


def _reuse(project: Path, tmp_path: Path, **env: str) -> tuple[Path, dict[str, Any]]:
    state = tmp_path / "setup.json"
    init, code, _ = okstra(
        "wizard",
        "init",
        "--project-root",
        str(project),
        "--state",
        str(state),
        "--host",
        "terminal",
        env=env,
    )
    assert code == 0, init
    _step(state, "checkout/chk-1", **env)
    moved = _step(state, "error-analysis", **env)
    assert moved["next"]["id"] == "reuse_previous", moved
    return state, _step(state, "reuse", **env)


def test_reuse_restores_the_whole_team_directive_and_related_tasks(
    project: Path, tmp_path: Path
) -> None:
    run_dir = project / ".okstra" / "tasks" / "checkout" / "chk-1" / "runs" / RUN
    manifest = (run_dir / "run-manifest.json").read_bytes()
    state, moved = _reuse(project, tmp_path)
    assert moved["next"]["id"] == "confirm", moved["next"]
    shown, code, _ = okstra("wizard", "show", "--state", str(state))
    assert code == 0
    reused = [h for h in shown["history"] if h["stepId"] not in ("task_pick", "task_type")]
    assert reused and all(
        h["provenance"] == f"reused:{RUN}" for h in reused if h["stepId"] != "reuse_previous"
    ), reused
    lines = [line for line in shown["confirmation"]["lines"] if line.get("provenance")]
    assert any(line["provenance"] == f"reused:{RUN}" for line in lines), lines
    _step(state, "confirm")
    outcome, code, _ = okstra("wizard", "outcome", "--state", str(state))
    assert code == 0, outcome
    request = outcome["request"]
    import json

    ran = json.loads(manifest)
    team: dict[str, list[str]] = {}
    for execution in sorted(ran["roleExecutions"], key=lambda e: (e["role"], e["ordinal"])):
        team.setdefault(execution["role"], []).append(execution["modelRef"])
    assert request["roleModels"] == team
    assert request["roleCounts"]["analyser"] == len(team["analyser"])
    assert request["roleCounts"]["critic"] == 1
    assert request["directive"] == "look at the cart"
    assert request["relatedTasks"] == ["other/t0"]
    assert (run_dir / "run-manifest.json").read_bytes() == manifest


def test_a_reused_model_that_no_longer_fits_is_asked_with_a_note(
    project: Path, tmp_path: Path, fake_bin: Any
) -> None:
    # The run's antigravity analyser cannot run now: its CLI is gone.
    only = fake_bin("claude", "codex", "grok", "kimi", directory=tmp_path / "fewer")
    path = os.pathsep.join([str(only), "/usr/bin", "/bin"])
    _state, moved = _reuse(project, tmp_path, PATH=path)
    prompt = moved["next"]
    assert prompt["id"] == "role-model:analyser:2", prompt
    assert "'antigravity/gemini-3-pro' to role-model:analyser:2 no longer holds" in prompt["help"]
    assert "cli 'gemini' not found on PATH" in prompt["help"]
