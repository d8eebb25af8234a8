"""The JSON Schemas `okstra schema <name>` prints (building validators: only loaded there)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any

from pydantic import Discriminator

from .. import records
from ..request import RunRequest
from .inputs import RunInputs
from .mcp import McpConfig
from .resume import ResumeDocument
from .run import LeadPromptMeta, RunManifest
from .task import ProjectDocument, RunsIndexRow, TaskManifest, TimelineEvent
from .worker import PaneActivity, ProjectRunsRow, WatcherRecord, WorkerExit, WorkerLaunch

# A timeline line: one of the events, told apart by its `event`.
_TIMELINE_EVENT: Any = Annotated[TimelineEvent, Discriminator("event")]


def _model(cls: type[Any]) -> Callable[[], dict[str, Any]]:
    return lambda: records.json_schema(cls, mode="serialization")


def _timeline_event() -> dict[str, Any]:
    schema: dict[str, Any] = records.adapter(_TIMELINE_EVENT).json_schema(by_alias=True)
    return schema


# `wizard-state` is added by the CLI (the wizard sits above this layer).
SCHEMAS: dict[str, Callable[[], dict[str, Any]]] = {
    "run-request": _model(RunRequest),
    "run-inputs": _model(RunInputs),
    "run-manifest": _model(RunManifest),
    "task-manifest": _model(TaskManifest),
    "lead-prompt-meta": _model(LeadPromptMeta),
    "resume": _model(ResumeDocument),
    "timeline-event": _timeline_event,
    "project": _model(ProjectDocument),
    "runs-index": _model(RunsIndexRow),
    "project-runs": _model(ProjectRunsRow),
    "worker-launch": _model(WorkerLaunch),
    "worker-exit": _model(WorkerExit),
    "lead-activity": _model(PaneActivity),
    "watcher": _model(WatcherRecord),
    "mcp-config": _model(McpConfig),
}


def json_schema(
    name: str, table: Mapping[str, Callable[[], dict[str, Any]]] = SCHEMAS
) -> dict[str, Any]:
    """The JSON Schema of document `name` (a key of `table`)."""
    schema = table[name]()
    schema.setdefault("title", name)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema
