"""What prepare carries over from the shared files it extends (`task-manifest.json`,
`project.json`): okstra's own keys read leniently by their names in files (a value of
another type is a new task's default).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..records import aliases_of, dataclass
from .task import LatestRun, ProjectDocument, TaskManifest, Workflow


def own(data: Mapping[str, Any] | None, record: type[Any], name: str, default: Any = None) -> Any:
    """What a shared file's object (`data`, as read) holds under `record`'s field `name`
    (by its name in files); `default` when the key is absent. The reading half of
    `base.merged`."""
    if data is None:
        return default
    return data.get(aliases_of(record).get(name, name), default)


def _mapping(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}


@dataclass(frozen=True, kw_only=True)
class CarriedTask:
    """What the next task manifest takes from the one it extends (`workflow` as read, its
    other keys kept; `next_recommended_phase` in any earlier shape, see
    `tasks.promote_pointer`; `created_at` None for a new task)."""

    workflow: dict[str, Any]
    phase_states: dict[str, Any]
    next_recommended_phase: Any
    last_completed_phase: str
    awaiting_approval: bool
    created_at: Any
    role_execution_index: list[Any]
    latest_run_by_task_type: dict[str, Any]

    @classmethod
    def of(cls, data: Mapping[str, Any] | None) -> CarriedTask:
        """What `data` (an existing task manifest, None for a new task) carries over."""
        workflow = dict(own(data, TaskManifest, "workflow") or {})
        last_completed = own(workflow, Workflow, "last_completed_phase")
        awaiting = own(workflow, Workflow, "awaiting_approval")
        return cls(
            workflow=workflow,
            phase_states=_mapping(own(workflow, Workflow, "phase_states")),
            next_recommended_phase=own(workflow, Workflow, "next_recommended_phase"),
            last_completed_phase=last_completed if isinstance(last_completed, str) else "",
            awaiting_approval=awaiting if isinstance(awaiting, bool) else False,
            created_at=own(data, TaskManifest, "created_at"),
            role_execution_index=list(own(data, TaskManifest, "role_execution_index") or []),
            latest_run_by_task_type=_mapping(own(data, TaskManifest, "latest_run_by_task_type")),
        )


def misshapen_task(data: Mapping[str, Any]) -> tuple[str, str] | None:
    """(field, the shape it needs) of the first of okstra's keys of an existing task
    manifest that prepare cannot extend; None when it can."""
    names = aliases_of(TaskManifest)
    if not isinstance(own(data, TaskManifest, "role_execution_index", []), list):
        return names["role_execution_index"], "a list"
    if not isinstance(own(data, TaskManifest, "workflow", {}), dict):
        return names["workflow"], "an object"
    return None


def latest_run_id(run: LatestRun | Mapping[str, Any]) -> Any:
    """The run id of a latest-run pointer (a record, or its object)."""
    if isinstance(run, LatestRun):
        return run.run_id
    return own(run, LatestRun, "run_id")


def upgraded_project(data: Mapping[str, Any] | None) -> dict[str, Any]:
    """`project.json` as read, in this layout: the earlier okstra's `project_id` is
    `projectId` (the same id; an existing `projectId` wins, and the old key goes)."""
    out = dict(data or {})
    earlier_id = out.pop("project_id", None)
    key = aliases_of(ProjectDocument)["project_id"]
    if key not in out and isinstance(earlier_id, str) and earlier_id:
        out[key] = earlier_id
    return out
