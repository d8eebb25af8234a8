"""The task identity of an earlier okstra's state file, as this okstra's paths need it.

The earlier okstra kept a typed id such as `CHK-114` as it was; prepare here needs slugs
(`chk-114`). The original spelling stays in the converted answers' echoes and notes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import OkstraError
from ..records import dataclass, field
from ..tasks import check_segment
from ..wizard.ids import TASK_GROUP, TASK_ID, TASK_PICK
from ..wizard.state import EXISTING_TASK, NEW_TASK, TASK_MODES
from .shapes import DROPPED_ANSWERS


@dataclass
class TaskIdentity:
    """Slugified task identity, with the echoes that show the original spelling."""

    echoes: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _slug(raw: str, what: str, identity: TaskIdentity) -> str:
    """`raw` as a slug ("" when it cannot be one), with a note when it changed."""
    if not raw:
        return ""
    try:
        slug = check_segment(raw, what)
    except OkstraError as exc:
        identity.notes.append(f"{what} {raw!r} cannot be used ({exc.message}): it is asked again")
        return ""
    if slug != raw:
        identity.notes.append(f"{what} {raw!r} is not a slug: it is used as {slug!r}")
    return slug


def task_identity(state: dict[str, Any]) -> TaskIdentity:
    """Slugify the task group, id and key of `state` in place."""
    identity = TaskIdentity()
    group_raw, id_raw = state["task_group"], state["task_id"]
    if state["task_mode"] == EXISTING_TASK and state["task_key"]:
        key_group, sep, key_id = state["task_key"].partition("/")
        if sep and key_group and key_id and "/" not in key_id:
            group_raw, id_raw = key_group, key_id
    group = _slug(group_raw, "task group", identity)
    task_id = _slug(id_raw, "task id", identity)
    state["task_group"] = group
    state["task_id"] = task_id
    key = f"{group}/{task_id}" if group and task_id else ""
    if state["task_mode"] in (NEW_TASK, EXISTING_TASK):
        original_key = state["task_key"] or (f"{group_raw}/{id_raw}" if group_raw else "")
        state["task_key"] = key
        if state["task_mode"] == EXISTING_TASK and key and key != original_key:
            identity.echoes[TASK_PICK] = f"{key} (was {original_key!r})"
    if group and group != group_raw:
        identity.echoes[TASK_GROUP] = f"{group} (was {group_raw!r})"
    if task_id and task_id != id_raw:
        identity.echoes[TASK_ID] = f"{task_id} (was {id_raw!r})"
    return identity


def source_notes(raw: Mapping[str, Any]) -> list[str]:
    """Notes about a source file that hold however it is opened (fresh or resumed).

    Read tolerantly: a field of the wrong type gives no note (the conversion refuses it).
    """
    state: dict[str, Any] = {}
    for name in ("task_mode", "task_key", "task_group", "task_id"):
        value = raw.get(name)
        state[name] = value.strip() if isinstance(value, str) else ""
    notes = task_identity(state).notes if state["task_mode"] in TASK_MODES else []
    return notes + [
        f"{name} ({what}: {raw[name]!r}) is not carried over: this okstra's wizard has no such step"
        for name, what in DROPPED_ANSWERS.items()
        if raw.get(name) not in (None, "", [], {}, False, 0)
    ]
