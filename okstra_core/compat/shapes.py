"""The earlier okstra's wizard state shapes, and how to tell them apart.

* **v1** (no `executionIdentityVersion`, or 1) chose its team with per-provider fields
  (`workers_override`, `lead_provider`, `claude_model`, …);
* its own **v2** shape (version 2) has today's `roleCounts`/`roleModels`, but lists
  `answered` as step ids and carries extra fields (`use_defaults`, `profile_workers`, …).

okstra writes neither; `okstra_core.compat.convert` turns both into okstra's v2 state.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..wizard import ids
from ..wizard.state import FILE_NAMES, VERSION_FIELD
from ..wizard.state import V1_PROVIDER_FIELDS as V1_PROVIDER_FIELDS

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
    """Whether `executionIdentityVersion` is absent, null or the integer 1 (a v1 file).

    Any other value is not v1; the engine refuses unknown versions by name.
    """
    version = raw.get(VERSION_FIELD)
    return version is None or (type(version) is int and version == 1)


def is_earlier_v2(raw: Mapping[str, Any]) -> bool:
    """Whether a v2-versioned state file is in the earlier okstra's shape.

    It lists `answered` as step ids or carries a field okstra never writes; a file with
    neither is okstra's own and is validated as such.
    """
    version = raw.get(VERSION_FIELD)
    if type(version) is not int or version != 2:
        return False
    answered = raw.get("answered")
    if isinstance(answered, list) and any(isinstance(item, str) for item in answered):
        return True
    return any(name in raw for name in EARLIER_ONLY_FIELDS)


def earlier_companion_source(raw: Mapping[str, Any], path: Path) -> Path | None:
    """The source file of an earlier okstra companion opened directly, or None.

    Opening `x.json.v2.json` (or an earlier-shape `x.json.v2.<sha>.json`) is opening
    `x.json`. None when it is no such companion or its source no longer exists.
    """
    recorded = raw.get(LEGACY_SOURCE_FIELD)
    where = recorded.get("path") if isinstance(recorded, dict) else None
    if not is_earlier_v2(raw) or not isinstance(where, str) or not where:
        return None
    source = Path(where)
    if source == Path(path).resolve() or not source.is_file():
        return None
    return source
