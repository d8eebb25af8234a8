"""A run's base with fake CLIs and real git: its writers branch from it, a later writer of
the run from its merged result, and a later run starts from an earlier run's result."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from worker_support import World, fake

from okstra_core.environment import Environment
from okstra_core.errors import UsageError
from okstra_core.runbase import earlier_results, resolve_base

PLAN = "---\napproved: true\n---\n## Stage 1\nMake it.\n"
FIXER = ("--role", "fixer", "--model", "codex/gpt-5.5-codex")


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def commit(root: Path, name: str, text: str) -> str:
    (root / name).write_text(text, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "-c", "user.name=p", "-c", "user.email=p@p", "commit", "-q", "-m", name)
    return git(root, "rev-parse", "HEAD")


@pytest.fixture
def world(tmp_path: Path) -> World:
    world = World(tmp_path)
    world.env.update(HOME=str(tmp_path / "home"), GIT_CONFIG_NOSYSTEM="1")
    (tmp_path / "home").mkdir()
    root = world.project
    (root / "plan.md").write_text(PLAN, encoding="utf-8")
    (root / ".gitignore").write_text(".okstra/\n", encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    commit(root, "a.txt", "old\n")
    return world


def _start(world: World, *who: str, **spec: object) -> dict[str, object]:
    code, doc = world.json(
        "worker", "start", world.run, *who, "--prompt", fake("Change it.", **spec),
        "--surface", "background",
    )  # fmt: skip
    assert code == 0, doc
    return doc


def test_writers_branch_from_the_base_then_from_the_runs_merged_result(world: World) -> None:
    root = world.project
    base = git(root, "rev-parse", "HEAD")
    commit(root, "a.txt", "newer, not the base\n")
    world.prepare("--approved-plan", "plan.md", "--base-ref", base[:12], task_type="implementation")
    manifest = world.manifest()
    assert (manifest["baseRef"], manifest["baseCommit"]) == (base[:12], base)
    one = _start(world, "implementer#1", tag="i", write={"b.txt": "bee\n"})
    assert one["baseCommit"] == base
    assert world.json("worker", "wait", world.run, "implementer#1")[0] == 0
    # Its worktree holds the base's files, not the project's newer commit.
    assert (Path(str(one["worktreePath"])) / "a.txt").read_text() == "old\n"
    env = Environment(env=world.env)
    troot = root / ".okstra/tasks/perf/widget"
    # Before a merge, the run has no result to start a later one from.
    with pytest.raises(UsageError, match=f"run:{world.run}: that run merged nothing") as info:
        resolve_base(root, troot, f"run:{world.run}", env.env)
    assert info.value.field == "--base-ref"
    code, merged = world.json("worker", "merge", world.run, "implementer#1")
    assert code == 0, merged
    # A writer started after that merge builds on the run's merged result.
    two = _start(world, *FIXER, tag="f", write={"c.txt": "sea\n"})
    assert two["baseCommit"] == merged["commit"]
    assert world.json("worker", "wait", world.run, "fixer#1")[0] == 0
    assert (Path(str(two["worktreePath"])) / "b.txt").read_text() == "bee\n"

    # A later run of the task starts from this run's merged result, whatever the
    # project's branch did since.
    first_run = world.run
    commit(root, "d.txt", "later\n")
    found = resolve_base(root, troot, f"run:{first_run}", env.env)
    assert found.commit == merged["commit"]
    assert [(r.run_id, r.commit) for r in earlier_results(root, troot, env.env)] == [
        (first_run, merged["commit"])
    ]
    world.prepare(
        "--approved-plan", "plan.md", f"--base-ref=run:{first_run}", task_type="implementation"
    )
    assert world.manifest()["baseCommit"] == merged["commit"]


def test_a_bad_base_exits_2_and_writes_nothing(world: World) -> None:
    proc = world.okstra(
        "prepare", "--project-root", str(world.project), "--task-group", "perf",
        "--task-id", "widget", "--task-type", "implementation", "--brief", "brief.md",
        "--approved-plan", "plan.md", "--host", "terminal", "--launch", "none",
        "--base-ref", "no-such-branch",
    )  # fmt: skip
    assert proc.returncode == 2
    assert b"--base-ref" in proc.stdout + proc.stderr and b"no-such-branch" in proc.stdout
    assert b"Traceback" not in proc.stderr
    assert not (world.project / ".okstra").exists()
