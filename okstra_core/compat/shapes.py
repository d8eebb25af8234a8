"""The earlier okstra's wizard state shapes: what they are, and how to tell them apart.

The earlier okstra wrote two wizard state shapes, and okstra writes neither:

* **v1** (no `executionIdentityVersion`, or version 1) chose its team with
  per-provider fields (`workers_override`, `lead_provider`, `claude_model`, …);
* its own **v2** shape (`executionIdentityVersion: 2`): `roleCounts`, `roleModels`,
  `roleSelectionOrder` as today, but `answered` is a list of step ids and the file
  carries the earlier wizard's extra fields (`use_defaults`, `profile_workers`,
  `selected_stages`, …). `is_earlier_v2` tells it from a v2 file okstra wrote.

Both are converted in memory (`okstra_core.compat.convert`) into a v2 state in
okstra's shape; this module holds the fields each shape has and the tests on a
parsed file.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..wizard.ids import (
    APPROVED_PLAN,
    BRIEF,
    DIRECTIVE,
    DIRECTIVE_PICK,
    RELATED_TASKS,
    RELATED_TASKS_PICK,
    REUSE_PREVIOUS,
    TASK_GROUP,
    TASK_ID,
    TASK_PICK,
    TASK_TYPE,
)

# One list of v1 fields: the v2 loader refuses them next to a v2 version (mixed file).
from ..wizard.state import (
    CONVERTED_V1,
    FILE_NAMES,
    V1_PROVIDER_FIELDS,
    V2_ROLE_FIELDS,
    VERSION_FIELD,
)

__all__ = [
    "CONVERTED_V1",
    "CONVERTED_V2",
    "DEFAULT_HOST",
    "DROPPED_ANSWERS",
    "LEGACY_SOURCE_FIELD",
    "STATIC_AFTER_ROLES",
    "STATIC_BEFORE_ROLES",
    "STATIC_STEP_FIELD",
    "STRING_FIELDS",
    "V1_PROVIDER_FIELDS",
    "V2_ROLE_FIELDS",
    "earlier_companion_source",
    "is_earlier_v2",
    "is_v1",
]

LEGACY_SOURCE_FIELD = FILE_NAMES["legacy_source"]
CONVERTED_V2 = "converted:v2"

# v1 step ids that v2 keeps as static steps, split around the role selection block.
STATIC_BEFORE_ROLES = (
    TASK_PICK,
    TASK_GROUP,
    TASK_ID,
    BRIEF,
    TASK_TYPE,
    APPROVED_PLAN,
    REUSE_PREVIOUS,
)
STATIC_AFTER_ROLES = (DIRECTIVE_PICK, DIRECTIVE, RELATED_TASKS_PICK, RELATED_TASKS)

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
# Which state field a static step's answer is, for steps whose answer is that field.
STATIC_STEP_FIELD: dict[str, str] = {
    TASK_GROUP: "task_group",
    TASK_ID: "task_id",
    BRIEF: "brief_path",
    TASK_TYPE: "task_type",
    APPROVED_PLAN: "approved_plan_path",
    DIRECTIVE: "directive",
    RELATED_TASKS: "related_tasks_raw",
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
# Fields only the earlier wizard wrote (its bookkeeping, or answers of steps this
# okstra does not have). Any of them in a v2-versioned file marks the earlier shape.
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
    """Tell whether a parsed state file is a legacy (v1) one.

    Args:
        raw: the parsed JSON object of a state file.

    Returns:
        True when `executionIdentityVersion` is absent, null or the integer 1. Any
        other value (2, an unknown version, a boolean, a string) is not v1; the
        engine refuses unknown versions by name.
    """
    if VERSION_FIELD not in raw:
        return True
    version = raw[VERSION_FIELD]
    return version is None or (type(version) is int and version == 1)


def is_earlier_v2(raw: Mapping[str, Any]) -> bool:
    """Tell whether a v2-versioned state file is in the earlier okstra's shape.

    The earlier okstra's v2 file lists `answered` as step ids (okstra writes objects)
    and carries fields okstra never writes (`use_defaults`, `profile_workers`,
    `selected_stages`, …). A file with neither is okstra's own and is validated as
    such (an unknown field there stays an error).
    """
    version = raw.get(VERSION_FIELD)
    if type(version) is not int or version != 2:
        return False
    answered = raw.get("answered")
    if isinstance(answered, list) and any(isinstance(item, str) for item in answered):
        return True
    return any(name in raw for name in EARLIER_ONLY_FIELDS)


def _source_path_of(raw: Mapping[str, Any]) -> str | None:
    source = raw.get(LEGACY_SOURCE_FIELD)
    if isinstance(source, dict) and isinstance(source.get("path"), str) and source["path"]:
        return str(source["path"])
    return None


def earlier_companion_source(raw: Mapping[str, Any], path: Path) -> Path | None:
    """The source file of an earlier okstra companion opened directly, or None.

    Opening `x.json.v2.json` (or `x.json.v2.<sha>.json` in the earlier shape) is
    opening `x.json`: the companion is found from there, by digest, as always. None
    when the file is not such a companion or its source no longer exists.
    """
    if not is_earlier_v2(raw):
        return None
    recorded = _source_path_of(raw)
    if recorded is None:
        return None
    source = Path(recorded)
    if source == Path(path).resolve() or not source.is_file():
        return None
    return source
