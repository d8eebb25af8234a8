"""Glances: what okstra still reads of a file its document refuses (`runs`, `status`).

A glance names the keys it reads as its fields; other keys are ignored and no value is
trusted for its type (each is checked where it is used).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

from ..records import aliases_of, config, dataclass, validate
from .run import Participant, RunManifest

_GLANCE = config(camel_case=True, extra="ignore")


class _LineGlance:
    """A glance at one decoded JSONL line."""

    __pydantic_config__ = _GLANCE

    @classmethod
    def of(cls, record: object) -> Self | None:
        """The glance of a decoded line (None when it is no JSON object)."""
        return validate(cls, record) if isinstance(record, dict) else None


@dataclass(frozen=True, kw_only=True)
class LeadExitGlance(_LineGlance):
    """A `timeline.jsonl` line as `okstra status` reads a lead's end from it: which
    event, of which run, and the last lines of its window (each value as written)."""

    event: Any = None
    run_id: Any = None
    last_lines: Any = None


@dataclass(frozen=True, kw_only=True)
class IndexEntryGlance(_LineGlance):
    """A line of the central `runs.jsonl` (`RunsIndexRow`) as `okstra runs --all`
    reads it: the run directory it names and when it was written (each as written)."""

    run_dir: Any = None
    at: Any = None


@dataclass(frozen=True, kw_only=True)
class ManifestGlance:
    """A run manifest its model refuses (`RunManifest`), in this version's layout (the
    previous one upgraded by the manifest's own `_upgrade`): the run's names and times,
    its participants (each as read) and how many role executions it lists."""

    __pydantic_config__ = _GLANCE

    execution_identity_version: Any = None
    run_id: Any = None
    task_key: Any = None
    task_type: Any = None
    project_root: Any = None
    created_at: Any = None
    entry_mode: Any = None
    lead_session_id: Any = None
    participants: Any = None
    role_executions: Any = None

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> ManifestGlance:
        """The glance of a decoded manifest (a JSON object)."""
        return validate(cls, RunManifest._upgrade(dict(data)))

    def participant(self, ref: str) -> dict[str, Any] | None:
        """The participant `ref` as read (the first listed with that ref), or None."""
        items = self.participants if isinstance(self.participants, list) else []
        key = aliases_of(Participant)["participant_ref"]
        for item in items:
            if isinstance(item, dict) and item.get(key) == ref:
                return item
        return None
