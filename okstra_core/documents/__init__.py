"""Typed documents: every file okstra writes has one record that writes and reads it.

Modules: `base` (the `Document` base), `inputs` (`run-inputs.json`), `host` (a host
session context as hosts spell it), `setup` (a setup's `<setup>.runs.jsonl`), `run`
(`run-manifest.json`, `lead-prompt.meta.json`), `mcp` (`mcp.json`), `task` (`task-manifest.json`,
timeline events and `parse_event`, `project.json`, `runs.jsonl` rows), `resume` (`resume.json`) and
`schema` (`SCHEMAS`, `json_schema(name)` for `okstra schema`).

The names load on first use, so a reader of one document (the wizard's reuse step
reads `run-inputs.json`) does not pay for defining every other record.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_names

if TYPE_CHECKING:
    from .base import EXECUTION_IDENTITY_VERSION, SCHEMA_VERSION, Document, OpenDocument
    from .inputs import RunInputs
    from .mcp import McpConfig, McpServerEntry
    from .resume import ResumeDiscover, ResumeDocument, ResumeParticipant
    from .run import (
        AddedExecution,
        ApprovedPlanRef,
        BindingRecord,
        DynamicRole,
        FileRef,
        LeadPromptMeta,
        Participant,
        RoleExecution,
        RunManifest,
    )
    from .schema import SCHEMAS, json_schema
    from .task import (
        TIMELINE_EVENTS,
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
        TimelineEvent,
        Workflow,
        parse_event,
    )

_LAZY = {
    "Document": ".base",
    "OpenDocument": ".base",
    "EXECUTION_IDENTITY_VERSION": ".base",
    "SCHEMA_VERSION": ".base",
    "RunInputs": ".inputs",
    "McpConfig": ".mcp",
    "McpServerEntry": ".mcp",
    "ResumeDiscover": ".resume",
    "ResumeDocument": ".resume",
    "ResumeParticipant": ".resume",
    "AddedExecution": ".run",
    "ApprovedPlanRef": ".run",
    "BindingRecord": ".run",
    "DynamicRole": ".run",
    "FileRef": ".run",
    "LeadPromptMeta": ".run",
    "Participant": ".run",
    "RoleExecution": ".run",
    "RunManifest": ".run",
    "TIMELINE_EVENTS": ".task",
    "TimelineEvent": ".task",
    "parse_event": ".task",
    "LatestRun": ".task",
    "LeadLaunched": ".task",
    "LeadLaunchFailed": ".task",
    "NextPhase": ".task",
    "ProjectDocument": ".task",
    "RoleExecutionIndexEntry": ".task",
    "RunPrepared": ".task",
    "RunsIndexRow": ".task",
    "SessionDiscovered": ".task",
    "TaskIdentity": ".task",
    "TaskManifest": ".task",
    "Workflow": ".task",
    "SCHEMAS": ".schema",
    "json_schema": ".schema",
}


__getattr__ = lazy_names(__name__, _LAZY)


__all__ = [
    "EXECUTION_IDENTITY_VERSION",
    "SCHEMAS",
    "SCHEMA_VERSION",
    "TIMELINE_EVENTS",
    "AddedExecution",
    "ApprovedPlanRef",
    "BindingRecord",
    "Document",
    "DynamicRole",
    "FileRef",
    "LatestRun",
    "LeadLaunchFailed",
    "LeadLaunched",
    "LeadPromptMeta",
    "McpConfig",
    "McpServerEntry",
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
    "TimelineEvent",
    "Workflow",
    "json_schema",
    "parse_event",
]
