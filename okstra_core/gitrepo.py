"""The git checkout a project lives in, and the commits its revisions name."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

from .errors import GitError, UsageError
from .records import dataclass

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
