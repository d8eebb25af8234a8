"""Writers through their whole life with fake CLIs and real git: each in its own worktree
outside the project, reviewed, merged or refused with nothing lost, discarded."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from worker_support import World, fake

PLAN = (
    "---\napproved: true\n---\n## Stage 1\nConformance tests: stage-1 — "
    ".okstra/tasks/perf/widget/qa/scripts/stage-1.sh (requires=[db])\n"
)
FIXER = ("--role", "fixer", "--model", "codex/gpt-5.5-codex")


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def world(tmp_path: Path) -> World:
    world = World(tmp_path)
    # No git identity at all: okstra's own commits must not need one.
    world.env.update(HOME=str(tmp_path / "home"), GIT_CONFIG_NOSYSTEM="1")
    (tmp_path / "home").mkdir()
    root = world.project
    (root / "plan.md").write_text(PLAN, encoding="utf-8")
    (root / "a.txt").write_text("one\ntwo\nthree\n", encoding="utf-8")
    (root / "b.txt").write_text("bee\n", encoding="utf-8")
    (root / ".gitignore").write_text(".okstra/\n", encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "-c", "user.name=p", "-c", "user.email=p@p", "commit", "-q", "-m", "base")
    world.prepare("--approved-plan", "plan.md", task_type="implementation")
    return world


def _start(world: World, *who: str, **spec: object) -> dict[str, object]:
    code, doc = world.json(
        "worker", "start", world.run, *who, "--prompt", fake("Change it.", **spec),
        "--surface", "background",
    )  # fmt: skip
    assert code == 0, doc
    return doc


def test_two_writers_on_different_files_both_merge(world: World) -> None:
    one = _start(world, "implementer#1", tag="i", write={"a.txt": "one\nTWO\nthree\n"})
    two = _start(world, *FIXER, tag="f", write={"b.txt": "bee\nbuzz\n"})
    head = git(world.project, "rev-parse", "HEAD").strip()
    for doc in (one, two):
        path = Path(str(doc["worktreePath"]))
        assert not path.is_relative_to(world.project) and doc["baseCommit"] == head
    assert one["branch"] == "okstra/perf/widget/implementation-001/implementer-1"
    assert world.started("i")["cwd"] == one["worktreePath"]
    assert world.json("worker", "wait", world.run, "implementer#1", "fixer#1")[0] == 0
    execution = world.execution("role-exec-implementer-001")
    assert execution["worktreePath"] == one["worktreePath"] and execution["baseCommit"] == head
    # What the writer left uncommitted is on its branch, committed as okstra.
    log = git(world.project, "log", "-1", "--format=%an|%s", str(one["branch"]))
    assert log == "okstra|okstra: implementer#1 · " + log.split(" · ", 1)[1]
    assert "(uncommitted at exit)" in log
    stat = world.okstra("worker", "diff", world.run, "implementer#1", "--stat")
    assert stat.returncode == 0 and b"a.txt" in stat.stdout and b"b.txt" not in stat.stdout
    assert world.json("worker", "merge", world.run, "implementer#1")[0] == 0
    code, doc = world.json("worker", "merge", world.run, "fixer#1", "--squash")
    assert code == 0 and doc["files"] == ["b.txt"], doc
    assert (world.project / "a.txt").read_text() == "one\nTWO\nthree\n"
    assert (world.project / "b.txt").read_text() == "bee\nbuzz\n"
    assert world.execution("role-exec-fixer-001")["mergedInto"] == "main"
    assert [e["label"].split(" ")[0] for e in world.events("worker-merged")] == [
        "implementer#1",
        "fixer#1",
    ]
    # The report keeps what happened: each outcome, each writer's branch and merge.
    (world.project / "report.json").write_text("{}", encoding="utf-8")
    proc = world.okstra("report", "finalize", world.run, "--data", "report.json")
    assert proc.returncode == 0, proc.stderr
    done = json.loads(proc.stdout)
    rows = {r["roleExecutionRef"]: r for r in done["executionRoles"]}
    implementer = rows["role-exec-implementer-001"]
    assert implementer["outcome"] == "exited 0" and implementer["merged"] is True
    assert implementer["branch"] == one["branch"]
    assert rows["role-exec-fixer-001"]["outcome"] == "exited 0"
    assert rows["role-exec-leader-001"]["outcome"] == "prepared"


def test_the_second_of_two_writers_on_one_line_conflicts_and_nothing_is_lost(
    world: World,
) -> None:
    _start(world, "implementer#1", tag="i", write={"a.txt": "one\nby-implementer\nthree\n"})
    _start(world, *FIXER, tag="f", write={"a.txt": "one\nby-fixer\nthree\n"})
    assert world.json("worker", "wait", world.run, "implementer#1", "fixer#1")[0] == 0
    assert world.json("worker", "merge", world.run, "implementer#1")[0] == 0
    head = git(world.project, "rev-parse", "HEAD")
    branch = str(world.execution("role-exec-fixer-001")["branch"])
    tip = git(world.project, "rev-parse", branch)
    proc = world.okstra("worker", "merge", world.run, "fixer#1")
    assert proc.returncode == 1 and b"a.txt" in proc.stderr and b"conflicts" in proc.stderr
    assert git(world.project, "rev-parse", "HEAD") == head
    assert git(world.project, "status", "--porcelain") == ""
    assert git(world.project, "rev-parse", branch) == tip
    assert "by-fixer" in git(world.project, "show", f"{branch}:a.txt")
    assert "mergedAt" not in world.execution("role-exec-fixer-001")
    # Discarding asks first; without a terminal it needs --yes.
    refused = world.okstra("worker", "discard", world.run, "fixer#1")
    assert refused.returncode == 2 and b"--yes" in refused.stderr
    assert world.json("worker", "discard", world.run, "fixer#1", "--yes")[0] == 0
    listed = git(world.project, "worktree", "list")
    assert "fixer-1" not in listed and "implementer-1" in listed
    assert branch not in git(world.project, "branch", "--list")
    assert world.execution("role-exec-fixer-001")["discardedAt"]
    assert len(world.events("worker-discarded")) == 1


def test_a_killed_writer_keeps_its_uncommitted_change(world: World) -> None:
    doc = _start(world, "implementer#1", tag="k", write={"new.txt": "half done\n"}, waitSignal=True)
    world.started("k")
    code, stopped = world.json("worker", "stop", world.run, "implementer#1", "--grace", "0")
    assert code == 0, stopped
    branch = str(doc["branch"])
    assert git(world.project, "show", f"{branch}:new.txt") == "half done\n"
    assert "(uncommitted at exit)" in git(world.project, "log", "-1", "--format=%s", branch)


def test_shared_tree_and_readers_run_in_the_project(world: World) -> None:
    doc = _start(world, "implementer#1", "--shared-tree", tag="s")
    assert doc["worktreePath"] is None and "--shared-tree" in str(doc["treeNote"])
    reader = _start(world, "verifier#1", tag="v")
    assert reader["worktreePath"] is None and reader["treeNote"] is None
    assert world.started("s")["cwd"] == str(world.project)
    assert world.started("v")["cwd"] == str(world.project)
    proc = world.okstra("worker", "diff", world.run, "verifier#1")
    assert proc.returncode == 2 and b"no worktree of its own" in proc.stderr


def test_a_follow_up_continues_the_workers_own_session(world: World) -> None:
    """A minted id (claude's) and one found in the CLI's output (codex's) both reach the
    resume argv; the turns are recorded; result --turn N reads an earlier one."""
    _start(world, "verifier#1", tag="v1", result="first answer")
    _start(world, *FIXER, tag="f1", result="fixed once", write={"b.txt": "bee\nfix\n"})
    assert world.json("worker", "wait", world.run, "verifier#1", "fixer#1")[0] == 0
    minted = world.participant("role-exec-verifier-001")["sessionRef"]
    found = world.participant("role-exec-fixer-001")["sessionRef"]
    assert minted and found
    for who, tag, session in (("verifier#1", "v2", minted), ("fixer#1", "f2", found)):
        code, doc = world.json(
            "worker", "send", world.run, who, "--prompt", fake("Again.", tag=tag, result="second"),
            "--surface", "background",
        )  # fmt: skip
        assert code == 0 and doc["turn"] == 2, doc
        seen = world.started(tag)
        assert session in seen["argv"] and "resume" in " ".join(seen["argv"])
    fixer = world.started("f2")
    assert fixer["cwd"] == world.execution("role-exec-fixer-001")["worktreePath"]
    assert world.json("worker", "wait", world.run, "verifier#1", "fixer#1")[0] == 0
    turns = world.execution("role-exec-fixer-001")["turns"]
    assert [(t["number"], t["status"], t["exitStatus"]) for t in turns] == [
        (1, "exited", 0),
        (2, "exited", 0),
    ]
    assert turns[0]["resultFile"].endswith("/turn-1/result.md")
    latest = world.okstra("worker", "result", world.run, "fixer#1")
    assert latest.stdout.strip() == b"second"
    earlier = world.okstra("worker", "result", world.run, "fixer#1", "--turn", "1")
    assert earlier.stdout.strip() == b"fixed once"
    assert len(world.events("worker-started")) == 4


def test_a_follow_up_is_refused_while_running_or_never_started(world: World) -> None:
    never = world.okstra("worker", "send", world.run, "verifier#1", "--prompt", "x")
    assert never.returncode == 2 and b"never started" in never.stderr
    hold = world.tmp / "release"
    _start(world, "verifier#1", tag="h", hold=str(hold))
    busy = world.okstra("worker", "send", world.run, "verifier#1", "--prompt", "x")
    assert busy.returncode == 2 and b"still running" in busy.stderr
    hold.write_text("go")
    assert world.json("worker", "wait", world.run, "verifier#1")[0] == 0


def test_prune_removes_the_worktrees_of_gone_runs_and_keeps_their_work(world: World) -> None:
    import shutil

    doc = _start(world, "implementer#1", tag="p", write={"kept.txt": "kept\n"})
    assert world.json("worker", "wait", world.run, "implementer#1")[0] == 0
    world.supervisor_ended("role-exec-implementer-001")  # nothing writes in the run now
    path, branch = Path(str(doc["worktreePath"])), str(doc["branch"])
    (path / "late.txt").write_text("after the end\n")  # uncommitted when the run goes
    shutil.rmtree(world.run_dir)
    code, out = world.json("runs", "--prune", "--yes")
    assert code == 0 and out["worktrees"] == [str(path)], out
    assert not path.exists() and "okstra/" not in git(world.project, "worktree", "list")
    assert git(world.project, "show", f"{branch}:kept.txt") == "kept\n"
    assert git(world.project, "show", f"{branch}:late.txt") == "after the end\n"
