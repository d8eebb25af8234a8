"""The base of a run: the commit its writers' worktrees branch from; the git checkout a
project lives in, and the commits its revisions name.

A git revision of the project, or `run:<run-id>`: an earlier run's merged result.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import GitError, OkstraError, UsageError
from .records import dataclass

if TYPE_CHECKING:
    from .documents.run import RunManifest

RUN_PREFIX = "run:"
FLAG = "--base-ref"


@dataclass(frozen=True)
class RunBase:
    """A run's base, resolved: as given (`ref`) and the full commit it named."""

    ref: str
    commit: str


@dataclass(frozen=True)
class EarlierResult:
    """An earlier run of the task whose writers were merged, and its merged result."""

    run_id: str
    commit: str


def merged_result(
    manifest: RunManifest, tree: Tree, env: Mapping[str, str] | None = None
) -> str | None:
    """The commit after the last merge the run's manifest records, or None."""
    merges = sorted(
        (e.merged_at, e.merge_commit)
        for e in manifest.role_executions
        if e.merge_commit and e.merged_at
    )
    if not merges:
        return None
    if len(merges) > 1:
        # Merges in the same second: the one the others are ancestors of.
        tips = run_git(
            tree.top, "merge-base", "--independent", *(c for _, c in merges), env=env, check=False
        ).stdout.split()
        if len(tips) == 1:
            return tips[0]
    return merges[-1][1]


def earlier_results(
    project_root: Path, task_root: Path, env: Mapping[str, str] | None = None
) -> list[EarlierResult]:
    """The task's runs with a merged result, oldest first (unreadable runs are skipped)."""
    tree = project_tree(project_root, env)
    runs = task_root / "runs"
    if tree is None or not runs.is_dir():
        return []
    found: list[tuple[str, EarlierResult]] = []
    for child in runs.iterdir():
        try:
            manifest = _read(child)
            commit = merged_result(manifest, tree, env)
        except OkstraError:
            continue
        if commit is not None:
            found.append((manifest.created_at, EarlierResult(run_id=child.name, commit=commit)))
    return [result for _, result in sorted(found, key=lambda pair: pair[0])]


def _read(run_dir: Path) -> RunManifest:
    # Imported here: the wizard's other steps never load the run documents.
    from .documents.run import RunManifest
    from .tasks import RUN_MANIFEST

    return RunManifest.read(run_dir / RUN_MANIFEST)


def _run_result(task_root: Path, run_id: str, tree: Tree, env: Mapping[str, str] | None) -> str:
    run_dir = task_root / "runs" / run_id
    if not run_id or "/" in run_id or run_id.startswith(".") or not run_dir.is_dir():
        raise UsageError(
            f"{RUN_PREFIX}{run_id}: the task has no run {run_id!r} (expected run:<run-id> of "
            "an earlier run of the same task, e.g. run:implementation-001)",
            field=FLAG,
        )
    try:
        commit = merged_result(_read(run_dir), tree, env)
    except OkstraError as exc:
        raise UsageError(
            f"{RUN_PREFIX}{run_id}: its run manifest cannot be read ({exc.message})", field=FLAG
        ) from None
    if commit is None:
        raise UsageError(
            f"{RUN_PREFIX}{run_id}: that run merged nothing, so it has no merged result "
            "(merge a writer first: okstra worker merge), or give a branch or commit",
            field=FLAG,
        )
    return resolve_commit(tree, commit, env, field=FLAG)


def resolve_base(
    project_root: Path, task_root: Path, ref: str, env: Mapping[str, str] | None = None
) -> RunBase:
    """The commit `ref` names for a run of the task (`UsageError` naming `--base-ref`)."""
    given = ref.strip()
    tree = project_tree(project_root, env)
    if tree is None:
        raise UsageError(
            f"the project at {project_root} is not a git checkout: a base ({given!r}) needs one",
            field=FLAG,
        )
    if tree.head is None:
        raise UsageError(
            f"the project's repository at {tree.top} has no commit yet: nothing to base on",
            field=FLAG,
        )
    if given.startswith(RUN_PREFIX):
        commit = _run_result(task_root, given.removeprefix(RUN_PREFIX), tree, env)
    else:
        commit = resolve_commit(tree, given, env, field=FLAG)
    return RunBase(ref=given, commit=commit)


# A worker's or a person's git variables must not steer okstra's git.
_GIT_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_PREFIX",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
)
_TIMEOUT = 120.0


def git_env(env: Mapping[str, str] | None) -> dict[str, str]:
    """`env` (or the process's) without git's steering variables, never prompting, C locale."""
    base = dict(os.environ if env is None else env)
    for name in _GIT_ENV:
        base.pop(name, None)
    base.update(GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0", LC_ALL="C")
    return base


def run_git(
    cwd: Path,
    *args: str,
    env: Mapping[str, str] | None = None,
    check: bool = True,
    extra_env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run `git -C cwd args…`; GitError (with git's answer) on a failure when `check`."""
    full = git_env(env)
    if extra_env:
        full.update(extra_env)
    try:
        done = subprocess.run(
            ["git", "-C", str(cwd), *args],
            env=full,
            capture_output=True,
            text=True,
            timeout=_TIMEOUT,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"git {args[0]} could not run: {exc}") from None
    if check and done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        raise GitError(f"git {' '.join(args[:2])} failed: {' / '.join(said[-3:]) or 'no answer'}")
    return done


@dataclass(frozen=True)
class Tree:
    """The git checkout a project lives in (`sub`: the project's directory, "" at the top)."""

    top: Path
    sub: str
    head: str | None
    branch: str | None


def project_tree(project_root: Path, env: Mapping[str, str] | None = None) -> Tree | None:
    """The git checkout of `project_root`, or None (not in one, or no git)."""
    try:
        done = run_git(
            project_root,
            "rev-parse",
            "--show-toplevel",
            "--show-prefix",
            "--verify",
            "-q",
            "HEAD^{commit}",
            env=env,
            check=False,
        )
    except GitError:
        return None
    lines = done.stdout.splitlines()
    if len(lines) < 2 or not lines[0]:
        return None
    head = lines[2] if len(lines) > 2 and done.returncode == 0 else None
    branch = run_git(project_root, "symbolic-ref", "-q", "--short", "HEAD", env=env, check=False)
    return Tree(
        top=Path(lines[0]),
        sub=lines[1].rstrip("/"),
        head=head,
        branch=branch.stdout.strip() or None,
    )


def resolve_commit(
    tree: Tree, ref: str, env: Mapping[str, str] | None = None, *, field: str = "--base-ref"
) -> str:
    """The commit `ref` names in `tree` (`UsageError` naming `field`)."""
    if not ref or ref.startswith("-") or "\0" in ref or "\n" in ref:
        raise UsageError(f"{ref!r} is not a git revision", field=field)
    done = run_git(
        tree.top, "rev-parse", "--verify", "-q", "--end-of-options", f"{ref}^{{commit}}",
        env=env, check=False,
    )  # fmt: skip
    if done.returncode != 0 or not done.stdout.strip():
        raise UsageError(f"{ref!r} names no commit of the repository at {tree.top}", field=field)
    return done.stdout.strip()
