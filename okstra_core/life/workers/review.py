"""`okstra worker diff|merge|discard`: review a writer's branch, merge it, or throw it away.

A writer's role execution holds its `worktreePath`, `branch` and `baseCommit`; its diff
is against that base, committed or not. A merge or discard waits for its end and is
recorded on the role execution and in the timeline.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...documents.worker import WorkerDiscarded, WorkerMerged
from ...environment import Environment
from ...errors import UsageError
from ...records import dataclass
from .. import worktrees
from . import record
from .observe import observe_team
from .record import read_manifest
from .team import WHO_ARG, Member, WorkerAnswer, find, members


@dataclass(frozen=True)
class _Writer:
    member: Member
    path: Path
    branch: str
    base: str
    root: Path
    run_id: str

    def fields(self, **more: Any) -> dict[str, Any]:
        """The answer's fields about the writer (its ref, label and branch), and `more`."""
        member = self.member
        return {
            "role_execution_ref": member.ref,
            "label": member.label,
            "branch": self.branch,
        } | more

    def event_fields(self) -> dict[str, Any]:
        """A timeline event's own fields about the writer (beside `fields`)."""
        return {"run_id": self.run_id, "participant_ref": self.member.participant_ref}


def _writer(run_dir: Path, who: str, environment: Environment | None = None) -> _Writer:
    """The writer `who` names, with its worktree (ends recorded first, given `environment`)."""
    if environment is not None:
        observe_team(run_dir, environment)
    _, manifest = read_manifest(run_dir)
    member = find(members(manifest), who)
    execution = member.execution
    path, branch, base = execution.worktree_path, execution.branch, execution.base_commit
    if not path or not branch or not base:
        if member.status == "prepared":
            why = "it was never started"
        else:
            why = execution.tree_note or "it does not write: it ran in the project's tree"
        raise UsageError(f"{member.short} has no worktree of its own: {why}", field=WHO_ARG)
    return _Writer(
        member=member,
        path=Path(path),
        branch=branch,
        base=base,
        root=Path(manifest.project_root),
        run_id=manifest.run_id,
    )


def _ended(writer: _Writer, what: str) -> None:
    if writer.member.status == record.RUNNING:
        raise UsageError(
            f"{writer.member.short} is still running; wait for it (`okstra worker wait`) or "
            f"stop it before you {what} its branch",
            field=WHO_ARG,
        )
    if writer.member.execution.discarded_at:
        raise UsageError(f"{writer.member.short}'s branch was discarded", field=WHO_ARG)


@dataclass(frozen=True, kw_only=True)
class WorkerDiff(WorkerAnswer):
    """A writer's changes against its base (`--stat`: the summary only)."""

    branch: str
    base_commit: str
    worktree_path: str
    stat: bool
    text: str


def worker_diff(
    run_dir: Path, environment: Environment, who: str, *, stat: bool = False
) -> WorkerDiff:
    """The writer's committed and uncommitted changes against its base.

    Raises:
        UsageError: not a writer with a worktree, or its worktree and branch are gone.
    """
    writer = _writer(run_dir, who)
    text = worktrees.diff(
        writer.root, writer.path, writer.branch, writer.base, stat=stat, env=environment.env
    )
    return WorkerDiff(
        **writer.fields(base_commit=writer.base, worktree_path=str(writer.path), stat=stat),
        text=text,
    )


@dataclass(frozen=True, kw_only=True)
class WorkerMerge(WorkerAnswer):
    """A writer's branch merged into the project's branch."""

    branch: str
    into: str
    commit: str
    squash: bool
    files: tuple[str, ...]
    kept_leftovers: str | None = None


def worker_merge(
    run_dir: Path, environment: Environment, who: str, *, squash: bool = False
) -> WorkerMerge:
    """Merge the writer's branch (leftovers committed first) into the project's branch.

    Raises:
        UsageError: running, discarded, not a writer, no branch checked out, or the
            project has uncommitted changes to the same files (nothing merged).
        MergeConflictError: it would conflict (nothing merged; the files named).
    """
    writer = _writer(run_dir, who, environment)
    _ended(writer, "merge")
    env = environment.env
    kept = worktrees.commit_leftovers(writer.path, writer.member.label, env)
    tree = worktrees.project_tree(writer.root, env)
    if tree is None:
        raise UsageError(f"the project at {writer.root} is no longer a git checkout")
    done = worktrees.merge(
        tree, writer.branch, writer.base, writer.member.label, squash=squash, env=env
    )
    now = environment.now().isoformat(timespec="seconds")
    merged = writer.fields(into=done.into, commit=done.commit, squash=squash, files=done.files)
    event = WorkerMerged(at=now, **writer.event_fields(), **merged)
    changes = {"merged_at": now, "merge_commit": done.commit, "merged_into": done.into}
    record.record_tree(run_dir, writer.member.ref, changes, event, now=now)
    return WorkerMerge(**merged, kept_leftovers=kept)


@dataclass(frozen=True, kw_only=True)
class WorkerDiscard(WorkerAnswer):
    """A writer's worktree and branch removed."""

    branch: str
    steps: tuple[str, ...]


def worker_discard(run_dir: Path, environment: Environment, who: str) -> WorkerDiscard:
    """Remove the writer's worktree and branch; UsageError if running, discarded, no writer."""
    writer = _writer(run_dir, who, environment)
    _ended(writer, "discard")
    steps = worktrees.discard(writer.root, writer.path, writer.branch, environment.env)
    now = environment.now().isoformat(timespec="seconds")
    event = WorkerDiscarded(
        at=now, **writer.event_fields(), **writer.fields(worktree_path=str(writer.path))
    )
    record.record_tree(run_dir, writer.member.ref, {"discarded_at": now}, event, now=now)
    return WorkerDiscard(**writer.fields(steps=steps))
