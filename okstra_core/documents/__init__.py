"""Typed documents: every file okstra writes has one model that writes and reads it.

`SCHEMAS` maps the names `okstra schema <name>` takes to a function giving the JSON
Schema of that document (generated from the models).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..request import RunRequest
from .base import Document, OpenDocument
from .resume import ResumeDiscover, ResumeDocument, ResumeParticipant
from .run import (
    EXECUTION_IDENTITY_VERSION,
    SCHEMA_VERSION,
    ApprovedPlanRef,
    BindingRecord,
    DynamicRole,
    FileRef,
    LeadPromptMeta,
    Participant,
    RoleExecution,
    RunInputs,
    RunManifest,
)
from .task import (
    TIMELINE_EVENT,
    LatestRun,
    LeadLaunched,
    LeadLaunchFailed,
    NextPhase,
    ProjectDocument,
    RoleExecutionIndexEntry,
    RunPrepared,
    RunsIndexRow,
    SessionDiscovered,
    TaskIdentity,
    TaskManifest,
    Workflow,
)

__all__ = [
    "EXECUTION_IDENTITY_VERSION",
    "SCHEMAS",
    "SCHEMA_VERSION",
    "TIMELINE_EVENT",
    "ApprovedPlanRef",
    "BindingRecord",
    "Document",
    "DynamicRole",
    "FileRef",
    "LatestRun",
    "LeadLaunchFailed",
    "LeadLaunched",
    "LeadPromptMeta",
    "NextPhase",
    "OpenDocument",
    "Participant",
    "ProjectDocument",
    "ResumeDiscover",
    "ResumeDocument",
    "ResumeParticipant",
    "RoleExecution",
    "RoleExecutionIndexEntry",
    "RunInputs",
    "RunManifest",
    "RunPrepared",
    "RunsIndexRow",
    "SessionDiscovered",
    "TaskIdentity",
    "TaskManifest",
    "Workflow",
    "json_schema",
]


def _model(cls: Any) -> Callable[[], dict[str, Any]]:
    return lambda: dict(cls.model_json_schema(by_alias=True, mode="serialization"))


# `wizard-state` is added by the CLI (the wizard sits above this layer).
SCHEMAS: dict[str, Callable[[], dict[str, Any]]] = {
    "run-request": _model(RunRequest),
    "run-inputs": _model(RunInputs),
    "run-manifest": _model(RunManifest),
    "task-manifest": _model(TaskManifest),
    "lead-prompt-meta": _model(LeadPromptMeta),
    "resume": _model(ResumeDocument),
    "timeline-event": lambda: dict(TIMELINE_EVENT.json_schema(by_alias=True)),
    "project": _model(ProjectDocument),
    "runs-index": _model(RunsIndexRow),
}


def json_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of document `name` (a key of `SCHEMAS`), with its `$id`-like title."""
    schema = SCHEMAS[name]()
    schema.setdefault("title", name)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema
