"""The project's task catalog: `.okstra/tasks/<group>/<id>/task-manifest.json` (read only).

`resolve_inside` is the one containment check for paths inside the project.
"""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path
from typing import Any

from .discovery import OKSTRA_DIR as OKSTRA_DIR
from .errors import OkstraError
from .names import name_char, name_problem
from .records import dataclass, field
from .store import read_json

TASKS_DIR = "tasks"
TASK_MANIFEST = "task-manifest.json"
RUN_INPUTS = "run-inputs.json"
# Run and task files: prepare writes them, the watching commands read them.
RUN_MANIFEST = "run-manifest.json"
LEAD_PROMPT = "lead-prompt.md"
LEAD_PROMPT_META = "lead-prompt.meta.json"
TASK_INDEX = "task-index.md"
TIMELINE = "timeline.jsonl"

POINTER_STATUSES = ("ready", "pending", "blocked", "terminal")
STATUS_READY = "ready"
STATUS_PENDING = "pending"

_SLUG_DASHES = re.compile(r"-{2,}")
RUN_DIR_NAME = re.compile(r"^(?P<type>[a-z][a-z-]*[a-z])-(?P<seq>\d+)$")


def tasks_root(project_root: Path) -> Path:
    """`<project>/.okstra/tasks`."""
    return Path(project_root) / OKSTRA_DIR / TASKS_DIR


def task_root(project_root: Path, group: str, task_id: str) -> Path:
    """`<project>/.okstra/tasks/<group>/<id>` (no validation: slug the parts first)."""
    return tasks_root(project_root) / group / task_id


def _escaping_link(given_root: Path, root: Path, candidate: Path) -> tuple[Path, Path] | None:
    """The first symlink on `candidate`, below the project root, that resolves outside it."""
    for part in (*reversed(candidate.parents), candidate):
        # Symlinks above the project root (/tmp -> /private/tmp) are not ours to judge.
        if part in (given_root, root) or not (
            part.is_relative_to(given_root) or part.is_relative_to(root)
        ):
            continue
        try:
            if not part.is_symlink():
                continue
            target = part.resolve()
        except (OSError, RuntimeError, ValueError):
            return part, part
        if not target.is_relative_to(root):
            return part, target
    return None


def resolve_inside(
    project_root: Path,
    value: str | Path,
    *,
    what: str,
    field: str | None = None,
    error: type[OkstraError] = OkstraError,
) -> Path:
    """Resolve a path (project-relative or absolute), refused (`error`) outside the project."""
    given_root = Path(project_root)
    root = given_root.resolve()
    try:
        raw = Path(value).expanduser()
        candidate = raw if raw.is_absolute() else given_root / raw
        resolved = candidate.resolve()
    except (OSError, RuntimeError, ValueError) as exc:
        raise error(f"{what} cannot be resolved ({exc}): {str(value)!r}", field=field) from None
    if resolved.is_relative_to(root):
        return resolved
    link = _escaping_link(given_root, root, candidate)
    how = f"{link[0]} is a symlink to {link[1]}" if link else f"got {resolved}"
    raise error(f"{what} must be inside the project ({root}): {how}", field=field)


def slugify(value: str) -> str:
    """Lower-case letters of any script, digits, `._-`; other runs become one dash (NFKC first)."""
    folded = unicodedata.normalize("NFKC", value).strip().lower()
    slug = "".join(c if name_char(c) else "-" for c in folded)
    return _SLUG_DASHES.sub("-", slug).strip("-")


def check_segment(raw: str, what: str) -> str:
    """Slugify one task path segment under the name rule (`OkstraError` if refused)."""
    text = raw.strip()
    if "/" in text or "\\" in text:
        raise OkstraError(f"{what} must not contain a path separator: {raw!r}")
    slug = slugify(text)
    if not slug:
        raise OkstraError(f"{what} is empty after slugification: {raw!r}")
    problem = name_problem(slug, what)
    if problem is not None:
        raise OkstraError(problem)
    return slug


@dataclass(frozen=True)
class NextPhasePointer:
    """Where a task should go next, and whether it may go there now."""

    phase: str
    status: str
    rationale: str = ""

    @property
    def ready(self) -> bool:
        return self.status == STATUS_READY

    def cell(self) -> str:
        """The picker's `next:` cell: the phase (or `--`), status in parentheses unless ready."""
        name = self.phase or "--"
        return name if self.ready else f"{name} ({self.status})"


def promote_pointer(raw: Any) -> NextPhasePointer:
    """Normalise a stored pointer: a legacy string is ready; missing or unknown is pending."""
    if isinstance(raw, str):
        return NextPhasePointer(raw.strip(), STATUS_READY if raw.strip() else STATUS_PENDING)
    if isinstance(raw, dict):
        phase = raw.get("phase")
        status = raw.get("status")
        rationale = raw.get("rationale")
        return NextPhasePointer(
            phase if isinstance(phase, str) else "",
            status if isinstance(status, str) and status in POINTER_STATUSES else STATUS_PENDING,
            rationale if isinstance(rationale, str) else "",
        )
    return NextPhasePointer("", STATUS_PENDING)


def lower_unfinished(pointer: NextPhasePointer, *, phase_completed: bool) -> NextPhasePointer:
    """A `ready` pointer while the current phase is not completed, lowered to pending."""
    if pointer.ready and not phase_completed:
        return NextPhasePointer(pointer.phase, STATUS_PENDING, pointer.rationale)
    return pointer


@dataclass(frozen=True)
class RunRef:
    """A prepared run of a task: `runs/<task-type>-<seq>/`."""

    name: str
    task_type: str
    seq: int
    path: Path

    @property
    def inputs_path(self) -> Path:
        return self.path / RUN_INPUTS


@dataclass(frozen=True)
class TaskEntry:
    """One task of the project, as the wizard shows it."""

    key: str
    group: str
    id: str
    root: Path
    current_phase: str = ""
    pointer: NextPhasePointer = NextPhasePointer("", STATUS_PENDING)
    brief_path: str = ""
    error: str | None = None
    manifest: dict[str, Any] = field(default_factory=dict, compare=False)

    def runs(self, task_type: str | None = None) -> list[RunRef]:
        """Prepared runs (a `run-inputs.json` exists), oldest first."""
        runs_dir = self.root / "runs"
        found: list[RunRef] = []
        if not runs_dir.is_dir():
            return found
        for child in runs_dir.iterdir():
            match = RUN_DIR_NAME.match(child.name)
            if not match or not (child / RUN_INPUTS).is_file():
                continue
            if task_type is not None and match["type"] != task_type:
                continue
            found.append(RunRef(child.name, match["type"], int(match["seq"]), child))
        found.sort(key=lambda r: (r.seq, r.name))
        return found

    def latest_run(self, task_type: str) -> RunRef | None:
        runs = self.runs(task_type)
        return runs[-1] if runs else None


def _brief_from_manifest(manifest: dict[str, Any]) -> str:
    # Under `task.briefPath`; older manifests had it at the top level.
    task = manifest.get("task")
    for holder in (task if isinstance(task, dict) else {}, manifest):
        for key in ("briefPath", "brief"):
            value = holder.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()
    return ""


def read_task(project_root: Path, group: str, task_id: str) -> TaskEntry:
    """Read one task; an unreadable manifest gives an entry carrying `error`."""
    root = task_root(project_root, group, task_id)
    key = f"{group}/{task_id}"
    manifest_path = root / TASK_MANIFEST
    try:
        raw = read_json(manifest_path, what="task manifest", follow=False)
    except OkstraError as exc:
        return TaskEntry(key, group, task_id, root, error=exc.render())
    if not isinstance(raw, dict):
        return TaskEntry(
            key, group, task_id, root, error=f"{manifest_path}: expected a JSON object"
        )
    workflow = raw.get("workflow")
    workflow = workflow if isinstance(workflow, dict) else {}
    phase = workflow.get("currentPhase")
    return TaskEntry(
        key=key,
        group=group,
        id=task_id,
        root=root,
        current_phase=phase if isinstance(phase, str) else "",
        pointer=promote_pointer(workflow.get("nextRecommendedPhase")),
        brief_path=_brief_from_manifest(raw),
        manifest=raw,
    )


def _real_dir(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def list_tasks(project_root: Path) -> list[TaskEntry]:
    """Every task of the project (a directory holding a task manifest), sorted by key."""
    base = tasks_root(project_root)
    if not base.is_dir():
        return []
    entries: list[TaskEntry] = []
    # `.okstra` is okstra's own: a symbolic link there (a group, a task) is not a task.
    for group_dir in sorted(p for p in base.iterdir() if _real_dir(p)):
        for task_dir in sorted(p for p in group_dir.iterdir() if _real_dir(p)):
            if os.path.lexists(task_dir / TASK_MANIFEST):
                entries.append(read_task(project_root, group_dir.name, task_dir.name))
    return entries


def find_task(project_root: Path, key: str) -> TaskEntry | None:
    """The task with this key, or None."""
    group, sep, task_id = key.partition("/")
    if not sep or not group or not task_id or "/" in task_id:
        return None
    # Keys come from people and answers files: never let one walk out of tasks/.
    if any(slugify(p) != p or name_problem(p) for p in (group, task_id)):
        return None
    if (task_root(project_root, group, task_id) / TASK_MANIFEST).exists():
        return read_task(project_root, group, task_id)
    return None
