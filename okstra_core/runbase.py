"""The base of a run: the commit its writers' worktrees branch from.

A git revision of the project, or `run:<run-id>`: an earlier run's merged result.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import OkstraError, UsageError
from .gitrepo import Tree, project_tree, resolve_commit, run_git
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
