"""`okstra runs --prune`: remove the run directories killed prepares left behind.

Only a real directory without any manifest entry, unchanged for a minute, on one file
system, while the task's sequence lock is free (held while checked again and removed)."""

from __future__ import annotations

import os
import shutil
import stat
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from ..errors import OkstraError
from ..prepare.runfiles import task_lock
from ..records import Delegate, config, dataclass, field
from ..store import SWEEP_GRACE_SECONDS
from ..tasks import RUN_MANIFEST, task_root
from . import worktrees
from .project import RunPlace, run_places

# The most entries a leftover directory may hold (a killed prepare leaves a handful).
MAX_ENTRIES = 1000


@dataclass(frozen=True)
class Leftover:
    """An incomplete run directory, and why it is kept (None: it can be removed)."""

    __pydantic_config__ = config(
        aliases={"run_dir": "runDir", "kept": "why"},
        skip=("place",),
        views=("run_dir",),
        first=("run_dir",),
    )

    place: RunPlace
    kept: str | None = None

    run_dir = Delegate[Path]("place.path")


@dataclass(frozen=True)
class PruneOutcome:
    """What `okstra runs --prune` removed and what it kept (with why)."""

    __pydantic_config__ = config(
        camel_case=True,
        aliases={"removed_dirs": "removed"},
        skip=("removed",),
        views=("ok", "removed_dirs"),
        first=("ok", "project_root", "removed_dirs", "kept", "worktrees"),
    )

    project_root: Path
    removed: tuple[RunPlace, ...] = ()
    kept: tuple[Leftover, ...] = field(default=())
    # Writers' worktrees of runs that are gone, removed (their branches stay).
    worktrees: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.kept

    @property
    def removed_dirs(self) -> tuple[Path, ...]:
        return tuple(p.path for p in self.removed)


def _age_problem(path: Path, now: float) -> str | None:
    """Why `path` cannot be removed yet (too recent, too big, a mount inside), or None."""
    try:
        top = os.lstat(path)
    except OSError as exc:
        return f"cannot inspect it: {exc.strerror or exc}"
    if not stat.S_ISDIR(top.st_mode):
        return "it is not a directory"
    newest = top.st_mtime
    count = 0
    for folder, dirs, files in os.walk(path, followlinks=False):
        for name in (*dirs, *files):
            count += 1
            if count > MAX_ENTRIES:
                return f"it holds more than {MAX_ENTRIES} entries: not a prepare's leftover"
            try:
                st = os.lstat(os.path.join(folder, name))
            except OSError:
                continue
            if st.st_dev != top.st_dev:
                return "another file system is mounted inside it"
            newest = max(newest, st.st_mtime)
    if now - newest < SWEEP_GRACE_SECONDS:
        return "it changed less than a minute ago (a prepare may be writing it)"
    return None


def leftovers(project_root: Path, *, now: float | None = None) -> list[Leftover]:
    """The project's incomplete run directories, each with why it would be kept (or None)."""
    moment = time.time() if now is None else now
    return [
        Leftover(place=place, kept=_age_problem(place.path, moment))
        for place, real in run_places(project_root)
        if real and not os.path.lexists(place.path / RUN_MANIFEST)
    ]


def prune(project_root: Path, *, now: Callable[[], float] = time.time) -> PruneOutcome:
    """Remove every incomplete run directory that may be removed; say why others stay."""
    removed: list[RunPlace] = []
    kept: list[Leftover] = []
    for leftover in leftovers(project_root, now=now()):
        if leftover.kept is not None:
            kept.append(leftover)
            continue
        why = _remove(leftover.place, now)
        if why is None:
            removed.append(leftover.place)
        else:
            kept.append(Leftover(place=leftover.place, kept=why))
    return PruneOutcome(project_root=project_root, removed=tuple(removed), kept=tuple(kept))


def _remove(place: RunPlace, now: Callable[[], float]) -> str | None:
    """Remove one leftover under its task's sequence lock; why not, or None when removed."""
    lock = task_lock(place.task_root)
    lock.timeout = 0.0  # a prepare holding it is running now: leave its directory alone
    try:
        lock.acquire()
    except OkstraError as exc:
        return f"the task's sequence lock is not free ({exc.render()})"
    try:
        # Again under the lock: a prepare may have written its manifest meanwhile.
        if os.path.lexists(place.path / RUN_MANIFEST):
            return f"it has a {RUN_MANIFEST} now"
        why = _age_problem(place.path, now())
        if why is not None:
            return why
        try:
            # `rmtree` never follows a link, refuses one at the top, and its fd walk is
            # safe against swapped directories.
            shutil.rmtree(place.path)
        except OSError as exc:
            return f"cannot remove it: {exc.strerror or exc}"
        return None
    finally:
        lock.release()


def gone_worktrees(
    project_root: Path, project_id: str, where: Path, env: Mapping[str, str]
) -> list[tuple[Path, str]]:
    """The writers' worktrees of this project (under `where/<project id>/`) whose run is gone."""
    tree = worktrees.project_tree(project_root, env)
    if tree is None:
        return []
    mine = worktrees.worktree_path(where, project_id, worktrees.BRANCH_PREFIX)
    found = []
    for path, branch in worktrees.okstra_worktrees(tree.top, env):
        run = worktrees.run_of_branch(branch)
        if run is None or not path.is_relative_to(mine):
            continue
        run_dir = task_root(project_root, run[0], run[1]) / "runs" / run[2]
        if not os.path.lexists(run_dir / RUN_MANIFEST):
            found.append((path, branch))
    return found


def prune_worktrees(
    project_root: Path, stale: list[tuple[Path, str]], env: Mapping[str, str]
) -> tuple[str, ...]:
    """Remove the worktrees `gone_worktrees` found (leftovers committed, branches kept)."""
    tree = worktrees.project_tree(project_root, env)
    if tree is None:
        return ()
    removed = []
    for path, branch in stale:
        worktrees.remove_worktree(tree.top, path, f"{branch} (its run is gone)", env)
        removed.append(str(path))
    worktrees.remove_stale(tree.top, env)
    return tuple(removed)
