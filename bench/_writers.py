"""(j) A writer's worktree: `worker start` of a writer, and `worker diff --stat`.

A git project of 2,000 files (40 directories of 50 small files, one commit) and an
implementation run whose `implementer` writes.

* `okstra worker start RUN implementer#1 --again --surface background`: a new role
  execution each time, so each start makes a new worktree of the 2,000 files and its
  branch (the fake CLI ends at once, after okstra returned). Bar: ≤ 0.5 s of okstra's
  own time, the worktree included. Baseline: `git worktree add -b <branch> <dir> HEAD`
  of the same repository, alone.
* `okstra worker diff RUN implementer#1 --stat` of a writer that changed 20 files and
  added 5 (uncommitted: the diff stages them in a copy of the worktree's index). Bar:
  ≤ 0.3 s. Baseline: the same `git worktree add` (the floor of any git work on the
  tree), so both rows read against one known cost.

Each timed interleaved with its baseline.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from ._fixtures import make_machine
from ._harness import Figure, NotAvailable, interleaved, okstra_argv, run, time_process

FILES = 2_000
PER_DIR = 50
PLAN = (
    "---\napproved: true\n---\n## Stage 1\nConformance tests: stage-1 — "
    ".okstra/tasks/bench/writers/qa/scripts/stage-1.sh (requires=[db])\n"
)
GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1"}


def _git(project: Path, env: dict[str, str], *args: str) -> None:
    done = subprocess.run(
        ["git", "-C", str(project), *args],
        env={**env, **GIT_ENV},
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise NotAvailable(f"git {args[0]} failed: {done.stderr.strip()[:200]}")


def _repository(project: Path, env: dict[str, str]) -> None:
    for n in range(FILES):
        folder = project / "src" / f"pkg{n // PER_DIR:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{n % PER_DIR:02d}.py").write_text(f"VALUE = {n}\n" * 20, encoding="utf-8")
    (project / "plan.md").write_text(PLAN, encoding="utf-8")
    (project / ".gitignore").write_text(".okstra/\n", encoding="utf-8")
    _git(project, env, "init", "-q", "-b", "main")
    _git(project, env, "add", "-A")
    _git(project, env, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "base")


def _prepare(project: Path, env: dict[str, str]) -> Path:
    # Workers start only in a project its person trusts (`okstra trust`).
    run([*okstra_argv(), "trust", str(project)], env=env, cwd=project, what="okstra trust")
    done = run(
        [
            *okstra_argv(), "prepare", "--project-root", str(project), "--task-group", "bench",
            "--task-id", "writers", "--task-type", "implementation", "--brief", "brief.md",
            "--approved-plan", "plan.md", "--host", "terminal", "--launch", "none",
        ],
        env=env,
        cwd=project,
        what="okstra prepare",
    )  # fmt: skip
    return Path(json.loads(done.stdout)["runDir"])


def _git_add(project: Path, env: dict[str, str], where: Path) -> float:
    """One `git worktree add` of a fresh branch, timed."""
    count = len(list(where.glob("*")))
    path, branch = where / f"plain-{count}", f"bench/plain-{count}"
    return time_process(
        ["git", "-C", str(project), "worktree", "add", "-q", "-b", branch, str(path), "HEAD"],
        env={**env, **GIT_ENV},
        cwd=project,
    )


def measure(work: Path, repeat: int) -> list[Figure]:
    try:
        machine = make_machine(work / "writers")
        env, project = machine.env, machine.project
        _repository(project, env)
        run_dir = _prepare(project, env)
        plain = work / "writers" / "plain"
        plain.mkdir()
        start = [
            *okstra_argv(), "worker", "start", str(run_dir), "implementer#1", "--again",
            "--surface", "background", "--prompt", "Change nothing.",
        ]  # fmt: skip
        run(start, env=env, cwd=project, what="okstra worker start (a writer)")
        subject, baseline = interleaved(
            lambda: time_process(start, env=env, cwd=project),
            lambda: _git_add(project, env, plain),
            repeat=repeat,
        )
        figures = [
            Figure(
                f"(j) `okstra worker start` of a writer, its worktree of {FILES:,} files",
                subject,
                baseline,
                "`git worktree add -b <branch> <dir> HEAD` alone",
                note="bar: ≤ 0.5 s",
            )
        ]
        figures.append(_diff(project, env, run_dir, plain, repeat))
        return figures
    except NotAvailable as exc:
        return [Figure("(j) a writer's worktree", missing=str(exc))]


def _diff(project: Path, env: dict[str, str], run_dir: Path, plain: Path, repeat: int) -> Figure:
    manifest = json.loads((run_dir / "run-manifest.json").read_bytes())
    execution = next(
        e
        for e in manifest["roleExecutions"]
        if e["roleExecutionRef"] == "role-exec-implementer-002"
    )
    tree = Path(execution["worktreePath"])
    for n in range(20):
        changed = tree / "src" / f"pkg{n:02d}" / "mod00.py"
        changed.write_text(changed.read_text(encoding="utf-8") + "CHANGED = 1\n", encoding="utf-8")
    for n in range(5):
        (tree / "src" / f"new{n}.py").write_text("NEW = 1\n", encoding="utf-8")
    diff = [*okstra_argv(), "worker", "diff", str(run_dir), "implementer#2", "--stat"]
    run(diff, env=env, cwd=project, what="okstra worker diff --stat")
    subject, baseline = interleaved(
        lambda: time_process(diff, env=env, cwd=project),
        lambda: _git_add(project, env, plain),
        repeat=repeat,
    )
    return Figure(
        "(j) `okstra worker diff --stat`, 25 files changed or new (uncommitted)",
        subject,
        baseline,
        "`git worktree add -b <branch> <dir> HEAD` alone",
        note="bar: ≤ 0.3 s",
    )
