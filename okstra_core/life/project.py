"""Naming a project's runs (the project itself is found by `okstra_core.discovery`).

Runs live at `<project>/.okstra/tasks/<group>/<task>/runs/<run>`; a path is a run only if,
resolved, it is one, reached through no link below a project that passes the owner check."""

from __future__ import annotations

import functools
import os
import re
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path

from ..discovery import UnsafeProjectError as UnsafeProjectError
from ..discovery import check_project, find_project_root, safe_directories
from ..errors import FileSystemError, UsageError
from ..names import is_name as is_task_name
from ..records import dataclass
from ..store import check_no_links
from ..tasks import OKSTRA_DIR, RUN_MANIFEST, TASKS_DIR

RUN_ARG = "<run>"
RUNS_DIR = "runs"
RUN_ID = re.compile(r"^[a-z][a-z-]*[a-z]-\d+$")
# Longest run name or path accepted (a path longer than the system's limit is no run).
MAX_ARG = 4096
EXPECTED = (
    f"expected a run id such as requirements-discovery-001, <task>/<run-id>, "
    f"<group>/<task>/<run-id>, or a path to a run directory (or its {RUN_MANIFEST}) "
    f"under <project>/{OKSTRA_DIR}/{TASKS_DIR}/<group>/<task>/{RUNS_DIR}/"
)


def project_root_or_error(start: Path, env: Mapping[str, str] | None = None) -> Path:
    """`find_project_root`, or a UsageError saying where okstra looked."""
    root = find_project_root(start, env)
    if root is None:
        raise UsageError(
            f"not inside an okstra project: no {OKSTRA_DIR} directory in "
            f"{Path(os.path.realpath(start))} or any directory above it up to your home "
            "directory or the file system's top (prepare a run there first, or give a run "
            "directory)",
            field=RUN_ARG,
        )
    return root


@dataclass(frozen=True)
class RunPlace:
    """Where a run directory is: `<root>/.okstra/tasks/<group>/<task>/runs/<name>`."""

    root: Path
    group: str
    task: str
    name: str

    @functools.cached_property
    def path(self) -> Path:
        return Path(os.path.join(self.task_root, RUNS_DIR, self.name))

    @functools.cached_property
    def task_root(self) -> Path:
        # Paths made from text: a listing makes these for every run.
        return Path(os.path.join(self.root, OKSTRA_DIR, TASKS_DIR, self.group, self.task))

    @property
    def task_key(self) -> str:
        return f"{self.group}/{self.task}"

    @property
    def ref(self) -> str:
        return f"{self.group}/{self.task}/{self.name}"


def place_of(path: Path) -> RunPlace | None:
    """The place of `path` if it is laid out as a run directory (nothing is checked)."""
    parents = path.parents
    layout = (RUNS_DIR, TASKS_DIR, OKSTRA_DIR)
    if len(parents) < 6 or (parents[0].name, parents[3].name, parents[4].name) != layout:
        return None
    return RunPlace(root=parents[5], group=parents[2].name, task=parents[1].name, name=path.name)


def _real_dir(path: Path | str) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _subdirs(path: str) -> list[str]:
    """Names of the real directories (never links) in `path`, sorted; none if unreadable."""
    try:
        with os.scandir(path) as entries:
            return sorted(e.name for e in entries if e.is_dir(follow_symlinks=False))
    except OSError:
        return []


def run_places(root: Path) -> Iterator[tuple[RunPlace, bool]]:
    """Every entry of the project's `runs/` directories, and whether it is a real directory
    (a link is given, to be shown as damaged, never read; none is entered)."""
    for group, task, name, real in run_entries(root):
        yield RunPlace(root=root, group=group, task=task, name=name), real


def run_entries(root: Path) -> Iterator[tuple[str, str, str, bool]]:
    """`run_places` as names (group, task, run, real): no object per run, for big listings."""
    tasks = os.path.join(root, OKSTRA_DIR, TASKS_DIR)
    if not (_real_dir(os.path.join(root, OKSTRA_DIR)) and _real_dir(tasks)):
        return
    for group in _subdirs(tasks):
        for task in _subdirs(os.path.join(tasks, group)):
            runs = os.path.join(tasks, group, task, RUNS_DIR)
            if not _real_dir(runs):
                continue
            try:
                with os.scandir(runs) as entries:
                    found = [(e.name, e.is_dir(follow_symlinks=False), e) for e in entries]
            except OSError:
                continue
            found.sort(key=lambda item: item[0])
            for name, real, entry in found:
                if real or entry.is_symlink():
                    yield group, task, name, real


def runs_named(root: Path, parts: list[str]) -> list[RunPlace]:
    """The real run directories a name (`run`, `task/run`, `group/task/run`) fits,
    matched segment by segment, never as a pattern."""
    group, task, run = ([None, None, *parts])[-3:]
    return [
        place
        for place, real in run_places(root)
        if real
        and place.name == run
        and (task is None or place.task == task)
        and (group is None or place.group == group)
    ]


def is_name(value: str) -> bool:
    """`run`, `task/run`, `group/task/run` or `group/task`, each segment a name
    (`okstra_core.names`) or, last, a run directory's name (`RUN_ID`)."""
    parts = value.split("/")
    if not 1 <= len(parts) <= 3:
        return False
    *tasks, last = parts
    return all(is_task_name(p) for p in tasks) and (
        is_task_name(last) or RUN_ID.fullmatch(last) is not None
    )


def run_at_path(value: str, start: Path, env: Mapping[str, str] | None = None) -> RunPlace:
    """The run a path (relative to `start`) names: resolved, a run directory (or its
    manifest) of a project passing the owner check, typed through no link below `.okstra`."""
    given = Path(value) if os.path.isabs(value) else start / value
    real = Path(os.path.realpath(given))
    try:
        real_is_file = stat.S_ISREG(os.lstat(real).st_mode)
    except OSError:
        raise UsageError(f"no such run: {value} ({EXPECTED})", field=RUN_ARG) from None
    if real_is_file and real.name == RUN_MANIFEST:
        real = real.parent
    place = place_of(real)
    if place is None or not _real_dir(real):
        raise UsageError(f"not a run: {value} ({EXPECTED})", field=RUN_ARG)
    typed = Path(os.path.abspath(given))
    if OKSTRA_DIR in typed.parts:
        index = len(typed.parts) - 1 - typed.parts[::-1].index(OKSTRA_DIR)
        try:
            check_no_links(Path(*typed.parts[:index]), typed, what="the run")
        except FileSystemError as exc:
            raise UsageError(
                f"not a run of this project: {value} goes through a link ({exc.render()})",
                field=RUN_ARG,
            ) from None
    check_project(place.root, safe_directories(env))
    return place
