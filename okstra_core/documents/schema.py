"""The JSON Schemas `okstra schema <name>` prints, generated from the document models."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from .. import records
from ..request import RunRequest
from .inputs import RunInputs
from .resume import ResumeDocument
from .run import LeadPromptMeta, RunManifest
from .task import TIMELINE_EVENT, ProjectDocument, RunsIndexRow, TaskManifest

__all__ = ["SCHEMAS", "json_schema"]


def _model(cls: Any) -> Callable[[], dict[str, Any]]:
    if isinstance(cls, type) and dataclasses.is_dataclass(cls):  # a record (okstra_core.records)
        return lambda: records.json_schema(cls, mode="serialization")
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
    """The JSON Schema of document `name` (a key of `SCHEMAS`)."""
    schema = SCHEMAS[name]()
    schema.setdefault("title", name)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema
