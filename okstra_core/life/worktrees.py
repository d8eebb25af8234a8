"""A git worktree per writing worker: made, committed at the end, diffed, merged, removed.

Each writer has its own branch and a worktree outside the project; nothing it did is lost,
a conflicting merge is refused untouched, and git runs with okstra's own environment."""

from __future__ import annotations

import itertools
import os
import re
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

from ..errors import GitError, MergeConflictError, UsageError
from ..paths import user_dirs
from ..records import dataclass
from ..runbase import Tree as Tree
from ..runbase import git_env
from ..runbase import project_tree as project_tree
from ..runbase import run_git as _git

# okstra's commits: its own identity, never signed (no prompt), no hooks.
OKSTRA_IDENTITY = (
    *("-c", "user.name=okstra", "-c", "user.email=okstra@localhost"),
    *("-c", "commit.gpgsign=false"),
)
BRANCH_PREFIX = "okstra/"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _part(text: str) -> str:
    return _UNSAFE.sub("-", text).strip(".-") or "x"


def branch_name(task_group: str, task_id: str, run_id: str, role: str, ordinal: int) -> str:
    """`okstra/<task-group>/<task-id>/<run-id>/<role>-<n>`."""
    parts = (task_group, task_id, run_id, f"{role}-{ordinal}")
    return BRANCH_PREFIX + "/".join(_part(p) for p in parts)


def worktrees_root(configured: str | None = None, env: Mapping[str, str] | None = None) -> Path:
    """Where worktrees live: the `worktrees.dir` setting, else `<data dir>/worktrees`."""
    if configured:
        return Path(configured).expanduser()
    return user_dirs(env).data / "worktrees"


def worktree_path(root: Path, project_id: str, branch: str) -> Path:
    """`<root>/<project id>/<task-group>/<task-id>/<run-id>/<role>-<n>`."""
    return root / _part(project_id) / branch.removeprefix(BRANCH_PREFIX)


@dataclass(frozen=True)
class Checkout:
    """A writer's worktree: its path, branch, base commit, and the worker's directory in it."""

    path: Path
    branch: str
    base: str
    cwd: Path


def make(
    tree: Tree,
    path: Path,
    branch: str,
    base: str,
    env: Mapping[str, str] | None = None,
    *,
    checkout: bool = True,
) -> Checkout:
    """`git worktree add -b <branch> <path> <base>` (files written later by `populate`
    with `checkout=False`); `UsageError` when the branch or the directory exists."""
    if os.path.lexists(path):
        raise UsageError(f"the worktree directory {path} exists already", field="<who>")
    if _tip(tree.top, branch, env) is not None:
        raise UsageError(f"the branch {branch} exists already", field="<who>")
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    how = () if checkout else ("--no-checkout",)
    _git(tree.top, "worktree", "add", "-q", *how, "-b", branch, str(path), base, env=env)
    cwd = path / tree.sub if tree.sub else path
    return Checkout(path=path, branch=branch, base=base, cwd=cwd)


def populate(path: Path, env: Mapping[str, str] | None = None) -> None:
    """Write the files (and the index) of a worktree made without its checkout."""
    _git(path, "reset", "-q", "--hard", "HEAD", env=env)


def commit_leftovers(path: Path, label: str, env: Mapping[str, str] | None = None) -> str | None:
    """Commit what is uncommitted in the worktree at `path`, as okstra; the commit or None."""
    if not path.is_dir():
        return None
    _git(path, "add", "-A", env=env)
    staged = _git(path, "diff", "--cached", "--quiet", env=env, check=False)
    if staged.returncode == 0:
        return None
    message = f"okstra: {label} (uncommitted at exit)"
    _git(path, *OKSTRA_IDENTITY, "commit", "-q", "--no-verify", "-m", message, env=env)
    return _git(path, "rev-parse", "HEAD", env=env).stdout.strip()


def _tip(tree_top: Path, branch: str, env: Mapping[str, str] | None) -> str | None:
    done = _git(
        tree_top, "rev-parse", "--verify", "-q", f"refs/heads/{branch}", env=env, check=False
    )
    return done.stdout.strip() if done.returncode == 0 else None


def diff(
    tree_top: Path,
    path: Path,
    branch: str,
    base: str,
    *,
    stat: bool = False,
    env: Mapping[str, str] | None = None,
) -> str:
    """The writer's changes against `base`: its commits and what it has not committed
    (staged in a copy of its index: the worktree does not change)."""
    how = ["--stat"] if stat else ["--patch"]
    if path.is_dir():
        index = _git(path, "rev-parse", "--git-path", "index", env=env).stdout.strip()
        source = Path(index) if os.path.isabs(index) else path / index
        with tempfile.TemporaryDirectory(prefix="okstra-diff-") as scratch:
            copy = Path(scratch) / "index"
            if source.exists():
                # With its time: git re-reads a file changed in the same second as
                # the index (a new copy would make it trust the old stat and miss it).
                shutil.copy2(source, copy)
            private = {"GIT_INDEX_FILE": str(copy)}
            _git(path, "add", "-A", env=env, extra_env=private)
            done = _git(path, "diff", "--cached", *how, base, env=env, extra_env=private)
        return done.stdout
    if _tip(tree_top, branch, env) is None:
        raise UsageError(f"neither the worktree {path} nor the branch {branch} exists any more")
    return _git(tree_top, "diff", *how, base, branch, env=env).stdout


def changed_files(
    tree_top: Path, base: str, branch: str, env: Mapping[str, str] | None = None
) -> tuple[str, ...]:
    """The files the branch changed since `base` (paths from the top of the checkout)."""
    done = _git(tree_top, "diff", "--name-only", "-z", base, branch, env=env)
    return tuple(p for p in done.stdout.split("\0") if p)


def _dirty(tree_top: Path, env: Mapping[str, str] | None) -> set[str]:
    """The paths with uncommitted changes in the project's checkout (untracked included)."""
    done = _git(tree_top, "status", "--porcelain=v1", "-z", "--untracked-files=all", env=env)
    dirty: set[str] = set()
    entries = iter(done.stdout.split("\0"))
    for entry in entries:
        if len(entry) > 3:
            dirty.add(entry[3:])
            if entry[0] in "RC":  # a rename's source follows
                dirty.add(next(entries, ""))
    dirty.discard("")
    return dirty


def _conflicts(tree_top: Path, branch: str, env: Mapping[str, str] | None) -> tuple[str, ...]:
    """The files a merge of `branch` into HEAD would conflict on (nothing is touched)."""
    done = _git(
        tree_top, "merge-tree", "--write-tree", "--name-only", "-z", "HEAD", branch,
        env=env, check=False,
    )  # fmt: skip
    if done.returncode == 0:
        return ()
    if done.returncode != 1:
        said = done.stderr.strip() or done.stdout.strip()
        raise GitError(f"git merge-tree failed: {said or 'no answer'}")
    # The tree, then the conflicted files, then an empty entry, then the messages.
    names = itertools.takewhile(bool, done.stdout.split("\0")[1:])
    return tuple(dict.fromkeys(names)) or ("(unknown)",)


@dataclass(frozen=True)
class Merged:
    """A merge done: the commit the project's branch is on now, and how."""

    commit: str
    into: str
    squash: bool
    files: tuple[str, ...]


def _identity_env(tree_top: Path, env: Mapping[str, str] | None) -> tuple[str, ...]:
    """The person's identity when set, else okstra's (git refuses a guessed one to commit)."""
    full = git_env(env)
    if full.get("GIT_COMMITTER_EMAIL") or full.get("EMAIL"):
        return ()
    known = _git(tree_top, "config", "user.email", env=env, check=False)
    return () if known.stdout.strip() else OKSTRA_IDENTITY


def merge(
    tree: Tree,
    branch: str,
    base: str,
    label: str,
    *,
    squash: bool = False,
    env: Mapping[str, str] | None = None,
) -> Merged:
    """Merge `branch` into the project's branch; refused, changing nothing, on a detached
    HEAD, uncommitted changes to files it changed, or a conflict (`MergeConflictError`)."""
    if tree.branch is None:
        raise UsageError(
            f"the project at {tree.top} is on no branch (a detached HEAD): check out the "
            "branch to merge into first"
        )
    files = changed_files(tree.top, base, branch, env)
    overlap = sorted(_dirty(tree.top, env) & set(files))
    if overlap:
        raise UsageError(
            f"the project has uncommitted changes to files {label} changed: "
            f"{', '.join(overlap)}; commit or stash them first (nothing was merged)"
        )
    conflicts = _conflicts(tree.top, branch, env)
    if conflicts:
        raise MergeConflictError(
            f"{label} conflicts with {tree.branch} in {', '.join(conflicts)}: nothing was "
            f"merged, both sides are as they were (branch {branch})",
            conflicts,
        )
    who = _identity_env(tree.top, env)
    if squash:
        _git(tree.top, *who, "merge", "--squash", "-q", branch, env=env)
        message = f"okstra: {label} (squashed from {branch})"
        staged = _git(tree.top, "diff", "--cached", "--quiet", env=env, check=False)
        if staged.returncode != 0:
            _git(tree.top, *who, "commit", "-q", "--no-verify", "-m", message, env=env)
    else:
        message = f"okstra: merge {label} ({branch})"
        done = _git(
            tree.top, *who, "merge", "--no-ff", "--no-verify", "-q", "-m", message, branch,
            env=env, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            _git(tree.top, "merge", "--abort", env=env, check=False)
            raise GitError(f"git merge failed and was aborted: {done.stderr.strip()}")
    head = _git(tree.top, "rev-parse", "HEAD", env=env).stdout.strip()
    return Merged(commit=head, into=tree.branch, squash=squash, files=files)


def discard(
    tree_top: Path, path: Path, branch: str | None, env: Mapping[str, str] | None = None
) -> tuple[str, ...]:
    """Remove the worktree and delete the branch (None: kept); returns what was done."""
    steps: list[str] = []
    if path.is_dir():
        _git(tree_top, "worktree", "remove", "--force", str(path), env=env)
        steps.append(f"removed the worktree {path}")
    _git(tree_top, "worktree", "prune", env=env, check=False)
    if branch is not None and _tip(tree_top, branch, env) is not None:
        _git(tree_top, "branch", "-D", "-q", branch, env=env)
        steps.append(f"deleted the branch {branch}")
    return tuple(steps)


def okstra_worktrees(
    tree_top: Path, env: Mapping[str, str] | None = None
) -> list[tuple[Path, str]]:
    """(path, branch) of every worktree of the checkout on an `okstra/` branch."""
    done = _git(tree_top, "worktree", "list", "--porcelain", "-z", env=env, check=False)
    found: list[tuple[Path, str]] = []
    path: Path | None = None
    for field in done.stdout.split("\0"):
        if field.startswith("worktree "):
            path = Path(field[len("worktree ") :])
        elif field.startswith("branch refs/heads/" + BRANCH_PREFIX) and path is not None:
            found.append((path, field[len("branch refs/heads/") :]))
    return found


def run_of_branch(branch: str) -> tuple[str, str, str] | None:
    """(task group, task id, run id) an okstra branch names, or None."""
    parts = branch.removeprefix(BRANCH_PREFIX).split("/")
    if not branch.startswith(BRANCH_PREFIX) or len(parts) != 4:
        return None
    return parts[0], parts[1], parts[2]


def remove_worktree(tree_top: Path, path: Path, label: str, env: Mapping[str, str] | None) -> None:
    """Remove one worktree, its leftovers committed on its branch first (which stays)."""
    commit_leftovers(path, label, env)
    discard(tree_top, path, None, env)


def remove_stale(tree_top: Path, env: Mapping[str, str] | None = None) -> None:
    """`git worktree prune`: forget worktrees whose directories are gone."""
    _git(tree_top, "worktree", "prune", env=env, check=False)
