"""Dynamic roles, providers that cannot run workers, and the team in `okstra status`."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from worker_support import World, fake

from tests.conftest import okstra_cmd

PLAN = (
    "---\napproved: true\n---\n## Stage 1\nConformance tests: stage-1 — "
    ".okstra/tasks/perf/widget/qa/scripts/stage-1.sh (requires=[db])\n"
)


@pytest.fixture
def implementation(tmp_path: Path) -> World:
    world = World(tmp_path)
    (world.project / "plan.md").write_text(PLAN, encoding="utf-8")
    world.prepare("--approved-plan", "plan.md", task_type="implementation")
    return world


def test_a_dynamic_role_becomes_a_new_role_execution(implementation: World) -> None:
    world = implementation
    code, doc = world.json(
        "worker",
        "start",
        world.run,
        "--role",
        "fixer",
        "--model",
        "codex/gpt-5.5-codex",
        "--prompt",
        fake("Fix the off-by-one.", tag="f1"),
        "--surface",
        "background",
    )
    assert code == 0, doc
    assert doc["roleExecutionRef"] == "role-exec-fixer-001"
    assert doc["label"] == "fixer#1 · codex/gpt-5.5-codex"
    assert doc["sourceRoleExecutionRef"] == "role-exec-leader-001"
    execution = world.execution("role-exec-fixer-001")
    assert execution["sourceRoleExecutionRef"] == "role-exec-leader-001"
    assert execution["modelSpecDigest"] and execution["binding"]["runner"] == "cli-wrapper"
    participant = world.participant("role-exec-fixer-001")
    assert participant["workerWriteCapability"] == "workspace-write"
    seen = world.started("f1")
    assert "workspace-write" in seen["argv"] and "gpt-5.5-codex" in seen["argv"]
    # okstra's own command directory comes first on the worker's PATH.
    assert seen["path"].split(os.pathsep)[0] == str(Path(sys.executable).parent)
    code, _ = world.json("worker", "wait", world.run, "fixer#1")
    assert code == 0
    # A second fixer is fixer#2; a model that cannot be a fixer is refused.
    code, doc = world.json(
        "worker",
        "start",
        world.run,
        "--role",
        "fixer",
        "--model",
        "codex/gpt-5.5-codex",
        "--prompt",
        fake("Another.", tag="f2"),
        "--surface",
        "background",
    )
    assert code == 0 and doc["roleExecutionRef"] == "role-exec-fixer-002", doc
    world.json("worker", "wait", world.run, "fixer#2")
    before = world.manifest()
    proc = world.okstra(
        "worker", "start", world.run, "--role", "fixer", "--model", "grok/grok-4", "--prompt", "x"
    )
    assert proc.returncode == 2 and b"cannot run fixer" in proc.stderr, proc.stderr
    assert world.manifest() == before


def test_the_implementer_writes_and_a_provider_without_worker_is_refused(
    tmp_path: Path,
) -> None:
    world = World(tmp_path)
    (world.project / "plan.md").write_text(PLAN, encoding="utf-8")
    world.prepare(
        "--approved-plan",
        "plan.md",
        "--role-model",
        "verifier=grok/grok-4",
        task_type="implementation",
    )
    code, doc = world.start("implementer#1", fake("Build it.", tag="i"), "--surface", "background")
    assert code == 0, doc
    seen = world.started("i")
    assert world.participant(doc["roleExecutionRef"])["workerWriteCapability"] == "workspace-write"
    assert any(flag in seen["argv"] for flag in ("acceptEdits", "workspace-write", "auto_edit"))
    world.json("worker", "wait", world.run, "implementer#1")
    before = world.manifest()
    proc = world.okstra("worker", "start", world.run, "verifier#1", "--prompt", "x")
    assert proc.returncode == 2 and b"cannot run workers" in proc.stderr, proc.stderr
    assert world.manifest() == before


def test_okstra_status_shows_the_workers_and_records_their_end(tmp_path: Path) -> None:
    world = World(tmp_path)
    world.prepare("--role-count", "analyser=1")
    hold = world.tmp / "release"
    code, doc = world.start(
        "analyser#1", fake("x", tag="s", hold=str(hold)), "--surface", "background"
    )
    assert code == 0, doc
    world.started("s")
    code, status = world.json("status", world.run)
    assert code == 0
    (row,) = [w for w in status["workers"] if w["roleExecutionRef"] == doc["roleExecutionRef"]]
    assert row["state"] == "running"
    hold.touch()
    world.exited(doc["roleExecutionRef"])
    proc = world.okstra("status", world.run)
    assert proc.returncode == 0 and b"analyser#1  exited 0" in proc.stdout, proc.stdout
    human = world.okstra("worker", "status", world.run)
    assert human.returncode == 0
    head, *rows = human.stdout.decode().splitlines()
    assert head.split()[:4] == ["WHO", "MODEL", "SURFACE", "STATE"]
    assert any(r.startswith("analyser#1") and "exited 0" in r for r in rows)
    assert any(r.startswith("leader#1") for r in rows)


def test_attach_to_a_background_worker_says_where_its_output_is(tmp_path: Path) -> None:
    world = World(tmp_path)
    world.prepare("--role-count", "analyser=1")
    world.start("analyser#1", fake("x", tag="a"), "--surface", "background")
    proc = world.okstra("attach", world.run, "analyser#1")
    assert proc.returncode == 2 and b"runs in the background" in proc.stderr, proc.stderr
    assert b"output.log" in proc.stderr


def test_the_lead_prompts_commands_run_as_written(tmp_path: Path) -> None:
    import shlex

    world = World(tmp_path)
    world.prepare("--role-count", "analyser=1")
    prompt = (world.run_dir / "lead-prompt.md").read_text(encoding="utf-8")
    commands = [
        line.strip()
        for line in prompt.splitlines()
        if " worker " in line and "role-exec-analyser-001" in line and "`" not in line
    ]
    start, wait, result = (shlex.split(c) for c in commands[:3])
    # okstra is not on the world's PATH: the prompt names the one that prepared the run.
    assert {start[0], wait[0], result[0]} == {okstra_cmd()[0]}
    assert [start[2], wait[2], result[2]] == ["start", "wait", "result"]
    task_file = world.project / start[start.index("--prompt-file") + 1]
    task_file.parent.mkdir(parents=True, exist_ok=True)
    task_file.write_text(fake("From the lead.", tag="lead"), encoding="utf-8")
    assert world.okstra(*start[1:], "--surface", "background").returncode == 0
    assert world.okstra(*wait[1:]).returncode == 0
    done = world.okstra(*result[1:])
    assert done.returncode == 0 and b"RESULT: From the lead." in done.stdout
