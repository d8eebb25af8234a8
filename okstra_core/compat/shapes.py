"""The earlier okstra's wizard state shapes, and how to tell them apart.

* **v1** (no `executionIdentityVersion`, or 1) chose its team with per-provider fields
  (`workers_override`, `lead_provider`, `claude_model`, …);
* its own **v2** shape (version 2) has today's `roleCounts`/`roleModels`, but lists
  `answered` as step ids and carries extra fields (`use_defaults`, `profile_workers`, …).

okstra writes neither; `okstra_core.compat.convert` turns both into okstra's v2 state.
Their fields are read typed (`SourceReader`): a field of the wrong type is a
`StateFileError` naming the file and the field, and `check_types` checks every field a
conversion may read, so a malformed file is refused as a whole.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import StateFileError
from ..records import dataclass
from ..wizard import ids
from ..wizard.state import FILE_NAMES, VERSION_FIELD
from ..wizard.state import V1_PROVIDER_FIELDS as V1_PROVIDER_FIELDS
from .lookup import roster_providers

LEGACY_SOURCE_FIELD = FILE_NAMES["legacy_source"]
CONVERTED_V2 = "converted:v2"

# v1 step ids that v2 keeps as static steps, split around the role selection block.
STATIC_BEFORE_ROLES = (
    ids.TASK_PICK,
    ids.TASK_GROUP,
    ids.TASK_ID,
    ids.BRIEF,
    ids.TASK_TYPE,
    ids.APPROVED_PLAN,
    ids.REUSE_PREVIOUS,
)
STATIC_AFTER_ROLES = (ids.DIRECTIVE_PICK, ids.DIRECTIVE, ids.RELATED_TASKS_PICK, ids.RELATED_TASKS)

# Static answers carried over verbatim (string fields; null/absent → "").
STRING_FIELDS = (
    "workspace_root",
    "project_root",
    "project_id",
    "host_runtime",
    "task_mode",
    "task_key",
    "task_group",
    "task_id",
    "brief_path",
    "task_type",
    "approved_plan_path",
    "directive",
    "related_tasks_raw",
    "updated_at",
)
# A v1 file from before host runtimes were recorded ran outside any agent host.
DEFAULT_HOST = "terminal"
# The state field that is a static step's answer.
STATIC_STEP_FIELD: dict[str, str] = {
    ids.TASK_GROUP: "task_group",
    ids.TASK_ID: "task_id",
    ids.BRIEF: "brief_path",
    ids.TASK_TYPE: "task_type",
    ids.APPROVED_PLAN: "approved_plan_path",
    ids.DIRECTIVE: "directive",
    ids.RELATED_TASKS: "related_tasks_raw",
}

# Answers of the earlier wizard that this okstra has no place for: a non-empty value
# is not carried over, and a note says so (field → what it was).
DROPPED_ANSWERS = {
    "selected_stages": "the stages to run",
    "handoff_mode": "the hand-off mode",
    "handoff_stages": "the hand-off stages",
    "analysis_target": "the analysis target",
    "feature_evidence_path": "the feature evidence file",
    "project_evidence_path": "the project evidence file",
    "clarification_response_path": "the clarification response file",
    "selected_direction_path": "the selected direction file",
    "pr_template_path": "the pull-request template",
    "fix_cycle": "the fix cycle",
    "worker_models_raw": "the extra worker models",
}
# Fields only the earlier wizard wrote: any of them in a v2-versioned file marks its shape.
EARLIER_ONLY_FIELDS = frozenset(
    {
        *DROPPED_ANSWERS,
        "use_defaults",
        "profile_workers",
        "critic_pending_text",
        "workers_custom_pending",
        "reuse_previous",
        "reuse_worktree",
        "pr_template_pick",
        "pr_template_scope",
        "clarification_pending",
        "base_ref",
    }
)


def is_v1(raw: Mapping[str, Any]) -> bool:
    """Whether `executionIdentityVersion` is absent, null or the integer 1 (a v1 file);
    any other value is not v1 (the engine refuses unknown versions by name)."""
    version = raw.get(VERSION_FIELD)
    return version is None or (type(version) is int and version == 1)


def is_earlier_v2(raw: Mapping[str, Any]) -> bool:
    """Whether a v2-versioned state file is in the earlier okstra's shape: it lists
    `answered` as step ids or carries a field okstra never writes (else it is okstra's own)."""
    version = raw.get(VERSION_FIELD)
    if type(version) is not int or version != 2:
        return False
    answered = raw.get("answered")
    if isinstance(answered, list) and any(isinstance(item, str) for item in answered):
        return True
    return any(name in raw for name in EARLIER_ONLY_FIELDS)


def earlier_companion_source(raw: Mapping[str, Any], path: Path) -> Path | None:
    """The source file of an earlier okstra companion opened directly (`x.json.v2.json`,
    or an earlier-shape `x.json.v2.<sha>.json`, opens `x.json`), or None: no such
    companion, or its source no longer exists."""
    recorded = raw.get(LEGACY_SOURCE_FIELD)
    where = recorded.get("path") if isinstance(recorded, dict) else None
    if not is_earlier_v2(raw) or not isinstance(where, str) or not where:
        return None
    source = Path(where)
    if source == Path(path).resolve() or not source.is_file():
        return None
    return source


def source_record(source: Path, digest: str) -> dict[str, str]:
    return {"path": str(Path(source).resolve()), "sha256": digest}


@dataclass(frozen=True)
class SourceReader:
    """Typed access to a source payload; a wrong type is a `StateFileError` naming the field."""

    raw: Mapping[str, Any]
    source: Path

    def _fail(self, name: str, expected: str) -> StateFileError:
        got = type(self.raw[name]).__name__
        return StateFileError(
            f"expected {expected} in an earlier okstra's wizard state, got {got}",
            path=self.source,
            field=name,
        )

    def string(self, *names: str) -> str:
        """The first non-empty of `names`, stripped ("" if none); each is type-checked."""
        found = ""
        for name in names:
            value = self.raw.get(name)
            if value is None:
                continue
            if not isinstance(value, str):
                raise self._fail(name, "a string")
            found = found or value.strip()
        return found

    def optional_bool(self, name: str) -> bool | None:
        value = self.raw.get(name)
        if value is not None and not isinstance(value, bool):
            raise self._fail(name, "true, false or null")
        return value

    def string_list(self, name: str) -> list[str]:
        value = self.raw.get(name)
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self._fail(name, "an array of strings")
        return list(value)

    def roster(self, *names: str) -> list[str]:
        """The first non-empty worker roster of `names` (a comma-separated string or an
        array of provider ids); each is type-checked."""
        found: list[str] = []
        for name in names:
            value = self.raw.get(name)
            if value is None:
                continue
            if isinstance(value, str):
                items = value.split(",")
            elif isinstance(value, list) and all(isinstance(v, str) for v in value):
                items = list(value)
            else:
                raise self._fail(name, "a comma-separated string or an array of provider ids")
            found = found or roster_providers(items)
        return found

    def provider_model(self, provider_id: str) -> str:
        """The legacy `<provider>_model` (or `<provider>Model`) value."""
        head, *rest = provider_id.replace("-", "_").split("_")
        camel = head + "".join(part[:1].upper() + part[1:] for part in rest) + "Model"
        return self.string(f"{provider_id.replace('-', '_')}_model", camel)


V1_ROSTER_FIELDS = ("workers_override", "workers", "workersOverride")
_V1_STRING_FIELDS = (
    *(f for f in V1_PROVIDER_FIELDS if f not in V1_ROSTER_FIELDS),
    "host_entry_mode",
)
_V1_BOOL_FIELDS = ("confirmed", "aborted", "use_defaults", "reuse_previous", "critic_pending_text")
_V1_LIST_FIELDS = ("answered", "available_functions", "profile_workers")


def check_types(reader: SourceReader) -> None:
    """Type-check every field the conversion may read, whether or not it is used, so a
    file is not converted differently depending on what its task type reads."""
    for name in (*STRING_FIELDS, *sorted(_V1_STRING_FIELDS)):
        reader.string(name)
    for name in V1_ROSTER_FIELDS:
        reader.roster(name)
    for name in _V1_BOOL_FIELDS:
        reader.optional_bool(name)
    for name in _V1_LIST_FIELDS:
        reader.string_list(name)
