"""The v2 wizard state file: model, strict loading, version checks, serialisation.

The file keeps the seeds' mixed naming for compatibility: `executionIdentityVersion`,
`roleCounts`, `roleModels`, `roleSelectionOrder` and `legacySource` are camelCase,
everything else snake_case. Loading is strict (a boolean is not a count, a number is
not a string) and every failure is a `StateFileError` naming the file and the field.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from .. import derived
from ..records import RecordError, camel, config, dataclass, field, place, to_data, validate

if TYPE_CHECKING:
    from pydantic import Field, StrictBool, StrictInt, StrictStr

from ..catalog.models import MAX_ROLE_COUNT
from ..errors import StateFileError
from ..vocabulary import SPAWN_PROCESS, EntryMode

STATE_VERSION: Literal[2] = 2

# How the task was chosen: not yet (""), a new task, or an existing one.
TaskMode = Literal["", "new", "existing"]
NEW_TASK: TaskMode = "new"
EXISTING_TASK: TaskMode = "existing"
TASK_MODES: tuple[TaskMode, ...] = ("", NEW_TASK, EXISTING_TASK)

# v1 provider fields (snake and camelCase): their presence next to a v2 version, or
# v2 role fields without a version, is a mixed file and is refused.
_V1_SNAKE_FIELDS = (
    "workers_override",
    "lead_provider",
    "lead_model",
    "claude_model",
    "codex_model",
    "antigravity_model",
    "grok_model",
    "kimi_model",
    "report_writer_provider",
    "report_writer_model",
    "executor",
    "critic",
)
V1_PROVIDER_FIELDS: frozenset[str] = frozenset(
    {*_V1_SNAKE_FIELDS, *map(camel, _V1_SNAKE_FIELDS), "workers"}
)
# The file's camelCase names of the state's fields (the seeds' naming), declared once:
# the record's aliases, and the names readers of a file not yet checked look for.
FILE_NAMES: Mapping[str, str] = {
    "execution_identity_version": "executionIdentityVersion",
    "role_counts": "roleCounts",
    "role_models": "roleModels",
    "role_selection_order": "roleSelectionOrder",
    "legacy_source": "legacySource",
}
VERSION_FIELD = FILE_NAMES["execution_identity_version"]
V2_ROLE_FIELDS: tuple[str, ...] = tuple(
    FILE_NAMES[name] for name in ("role_counts", "role_models", "role_selection_order")
)

MIXED_VERSIONS = "mixed wizard state versions are not allowed"

# Provenances: "chosen" | "default:<scope>" | "reused:<run>" | "converted:v1".
CHOSEN = "chosen"
# An answer taken as okstra's own default (the person pressed `d`, "all defaults").
DEFAULT_BUNDLED = "default:bundled"
CONVERTED_V1 = "converted:v1"

# A revision stays an exact JSON integer (checked before anything is sized by it).
MAX_REVISION = 2**53


@dataclass
class AnsweredStep:
    """One answered step, in answer order.

    Attributes:
        step: the step id (`task_pick`, `role-model:analyser:2`, …).
        answer: the submitted value (option value or text).
        provenance: why the value is there: `chosen`, `default:<scope>` (the prompt's
            default from a model-defaults scope was taken), `reused:<run>`,
            `converted:v1`.
        echo: the echo shown when it was answered (empty for converted answers).
    """

    __pydantic_config__ = config()

    step: Annotated[StrictStr, Field(min_length=1)]
    answer: StrictStr
    provenance: StrictStr = CHOSEN
    echo: StrictStr = ""


@dataclass
class LegacySource:
    """Where a companion file came from: the v1 file and the sha256 of its bytes."""

    __pydantic_config__ = config()

    path: StrictStr
    sha256: Annotated[StrictStr, Field(pattern=r"^[0-9a-f]{64}$")]


@dataclass
class StaleNote:
    """An answer that no longer held when the wizard was loaded, and why it was rewound."""

    __pydantic_config__ = config()

    step: StrictStr
    answer: StrictStr
    reason: StrictStr


@dataclass(kw_only=True)
class WizardState:
    """The whole persisted state of one wizard.

    Python names are snake_case; the file's names of the role fields are camelCase
    (`FILE_NAMES`). Strict: a boolean is not a count, a number is not a string.
    """

    __pydantic_config__ = config(aliases=FILE_NAMES)

    execution_identity_version: Literal[2] = STATE_VERSION
    role_counts: dict[StrictStr, Annotated[StrictInt, Field(ge=0, le=MAX_ROLE_COUNT)]]
    role_models: dict[StrictStr, Annotated[list[StrictStr], Field(max_length=MAX_ROLE_COUNT)]]
    role_selection_order: list[StrictStr]
    legacy_source: LegacySource | None = None

    workspace_root: StrictStr = ""
    project_root: Annotated[StrictStr, Field(min_length=1)]
    project_id: StrictStr = ""
    host_runtime: Annotated[StrictStr, Field(min_length=1)]
    host_entry_mode: EntryMode = SPAWN_PROCESS
    available_functions: list[StrictStr] = field(default_factory=list)

    task_mode: TaskMode = ""
    task_key: StrictStr = ""
    task_group: StrictStr = ""
    task_id: StrictStr = ""
    brief_path: StrictStr = ""
    task_type: StrictStr = ""
    approved_plan_path: StrictStr = ""
    # The run's base for its writers (`base_ref` step; absent from the file when empty).
    run_base: StrictStr = ""
    directive: StrictStr = ""
    related_tasks_raw: StrictStr = ""

    answered: list[AnsweredStep] = field(default_factory=list)
    confirmed: StrictBool | None = None
    aborted: StrictBool = False
    edit_target: StrictStr = ""
    remembered_answers: dict[StrictStr, StrictStr] = field(default_factory=dict)

    revision: Annotated[StrictInt, Field(ge=0, le=MAX_REVISION)] = 0
    updated_at: StrictStr = ""
    # Set when loading rewound an answer that no longer held; cleared by the next answer.
    stale: StaleNote | None = None

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for index, entry in enumerate(self.answered):
            if entry.step in seen:
                raise ValueError(f"answered[{index}]: step {entry.step!r} is answered twice")
            seen.add(entry.step)
        for role, models in self.role_models.items():
            if not models:
                # An empty list means "no model chosen": store it as absent instead.
                raise ValueError(f"roleModels.{role}: empty list (omit the role instead)")

    def entry(self, step: str) -> AnsweredStep | None:
        return next((entry for entry in self.answered if entry.step == step), None)

    def answer_of(self, step: str) -> str | None:
        entry = self.entry(step)
        return None if entry is None else entry.answer

    def is_answered(self, step: str) -> bool:
        return self.entry(step) is not None

    def copy(self) -> WizardState:
        """A deep copy, by a plain walk: a state has no shared parts, and `deepcopy`'s
        memo and reduce protocol cost more than the copy on every answer."""
        twin: WizardState = _clone(self)
        return twin

    def to_file(self) -> dict[str, Any]:
        """The JSON object written to disk (camelCase role fields, snake_case rest)."""
        data: dict[str, Any] = to_data(self)
        for optional in ("legacySource", "stale"):
            if data.get(optional) is None:
                data.pop(optional, None)
        if not data.get("run_base"):
            data.pop("run_base", None)
        return data


def _clone(value: Any) -> Any:
    kind = type(value)
    if kind is list:
        return [_clone(item) for item in value]
    if kind is dict:
        return {key: _clone(item) for key, item in value.items()}
    if kind in (str, int, bool, float) or value is None:
        return value
    if dataclasses.is_dataclass(kind):
        twin = copy.copy(value)
        for item in dataclasses.fields(kind):
            object.__setattr__(twin, item.name, _clone(getattr(value, item.name)))
        return twin
    return copy.deepcopy(value)


def classify_version(raw: dict[str, Any]) -> Literal[1, 2]:
    """Tell a v1 file from a v2 file; `StateFileError` (field named, no path) for mixed
    or unknown versions."""
    version = raw.get(VERSION_FIELD)
    # `True == 1` in Python: a boolean version is a wrong type, not version 1.
    if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
        raise StateFileError(
            f"unknown wizard state version {_as_json(version)}: expected 1 or 2",
            field=VERSION_FIELD,
        )
    if version is None or version == 1:
        if any(name in raw for name in V2_ROLE_FIELDS):
            raise StateFileError(MIXED_VERSIONS, field=VERSION_FIELD)
        return 1
    if version == STATE_VERSION:
        v1_fields = sorted(name for name in raw if name in V1_PROVIDER_FIELDS)
        if v1_fields:
            raise StateFileError(MIXED_VERSIONS, field=v1_fields[0])
        return 2
    raise StateFileError(
        f"unknown wizard state version {_as_json(version)}: this okstra reads versions 1 and 2",
        field=VERSION_FIELD,
    )


def parse_v2(raw: Any, path: str) -> WizardState:
    """Validate a decoded v2 state object (`StateFileError`: `path`, first bad field)."""
    if not isinstance(raw, dict):
        raise StateFileError(f"expected a JSON object, found {type(raw).__name__}", path=path)
    try:
        state = validate(WizardState, raw)
    except RecordError as exc:
        first = exc.errors()[0]
        field = place(tuple(first["loc"])) or None
        message = first["msg"]
        if first["type"] == "int_type" and isinstance(first.get("input"), bool):
            message = "expected an integer count (a boolean is not a count)"
        elif first["type"] == "extra_forbidden":
            message = "unknown field in a v2 wizard state file"
        elif first["type"] == "missing":
            message = "required field is missing"
        more = len(exc.errors()) - 1
        if more:
            message += f" (and {more} more problem{'s' if more > 1 else ''})"
        raise StateFileError(message, path=path, field=field) from None
    return state


def _as_json(value: Any) -> str:
    """A value as the file spells it (`true`, `"2"`), not as Python prints it."""
    return json.dumps(value, ensure_ascii=False, default=str)


# The state a process wrote (or validated) is derived data keyed by the file's path and
# exact bytes: a process reading the same bytes skips validating (and importing
# pydantic); a file edited by hand, by another okstra, or torn, is validated.
STATES = derived.Kind("states", keep=8, code=("wizard/state.py", "records.py"))


def recall_state(path: Path, data: bytes, cache_dir: Path) -> WizardState | None:
    """The record of a state file whose bytes `data` an okstra process checked, or None."""
    key = derived.key(STATES, os.path.abspath(path), data)
    return derived.recall_value(cache_dir, STATES, key, WizardState)


def remember_state(path: Path, data: bytes, state: WizardState, cache_dir: Path) -> None:
    """Keep `state` as the checked record of the file bytes `data` (best effort)."""
    derived.keep_value(cache_dir, STATES, derived.key(STATES, os.path.abspath(path), data), state)
