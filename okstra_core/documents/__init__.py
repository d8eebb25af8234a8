"""Typed documents: every file okstra writes has one record that writes and reads it.

The names load on first use, so a reader of one document does not pay for defining every
other record.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import by_module, lazy_names

if TYPE_CHECKING:
    from .base import EXECUTION_IDENTITY_VERSION as EXECUTION_IDENTITY_VERSION
    from .base import SCHEMA_VERSION as SCHEMA_VERSION
    from .base import Document as Document
    from .inputs import RunInputs as RunInputs
    from .resume import ResumeDiscover as ResumeDiscover
    from .resume import ResumeDocument as ResumeDocument
    from .resume import ResumeParticipant as ResumeParticipant
    from .run import AddedExecution as AddedExecution
    from .run import ApprovedPlanRef as ApprovedPlanRef
    from .run import BindingRecord as BindingRecord
    from .run import DynamicRole as DynamicRole
    from .run import FileRef as FileRef
    from .run import LeadPromptMeta as LeadPromptMeta
    from .run import Participant as Participant
    from .run import RoleExecution as RoleExecution
    from .run import RunManifest as RunManifest
    from .task import LatestRun as LatestRun
    from .task import LeadLaunched as LeadLaunched
    from .task import LeadLaunchFailed as LeadLaunchFailed
    from .task import NextPhase as NextPhase
    from .task import ProjectDocument as ProjectDocument
    from .task import RoleExecutionIndexEntry as RoleExecutionIndexEntry
    from .task import RunPrepared as RunPrepared
    from .task import RunsIndexRow as RunsIndexRow
    from .task import SessionDiscovered as SessionDiscovered
    from .task import TaskIdentity as TaskIdentity
    from .task import TaskManifest as TaskManifest
    from .task import Workflow as Workflow
    from .task import parse_event as parse_event

_LAZY = by_module(
    {
        ".base": ("Document", "EXECUTION_IDENTITY_VERSION", "SCHEMA_VERSION"),
        ".inputs": ("RunInputs",),
        ".resume": ("ResumeDiscover", "ResumeDocument", "ResumeParticipant"),
        ".run": (
            "AddedExecution", "ApprovedPlanRef", "BindingRecord", "DynamicRole", "FileRef",
            "LeadPromptMeta", "Participant", "RoleExecution", "RunManifest",
        ),
        ".task": (
            "parse_event", "LatestRun", "LeadLaunched", "LeadLaunchFailed", "NextPhase",
            "ProjectDocument", "RoleExecutionIndexEntry", "RunPrepared", "RunsIndexRow",
            "SessionDiscovered", "TaskIdentity", "TaskManifest", "Workflow",
        ),
    }
)  # fmt: skip


__getattr__ = lazy_names(__name__, _LAZY)


__all__ = sorted(_LAZY)
