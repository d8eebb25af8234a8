"""Converting an earlier okstra's state file into okstra's v2 state, in memory.

Both earlier shapes (`okstra_core.compat.shapes`) become a v2 state dict in okstra's file
shape (`okstra_core.wizard.state`): every answer taken over is an `answered` entry
`{step, answer, provenance}` — `converted:v1`, `converted:v2`, or `default:<scope>` for a
model taken from the role's default candidates — and `legacySource` names the source
(resolved path) and the sha256 of its bytes. Notes go to a list the caller gives. A
typed task id such as `CHK-114` becomes the slug paths need (`chk-114`); its original
spelling stays in the answers' echoes and the notes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..catalog.models import Profile
from ..documents.base import merged
from ..errors import OkstraError, StateFileError
from ..records import dataclass, field
from ..tasks import check_segment
from ..vocabulary import EARLIER_DEFAULT_PROVIDER, ENTRY_MODES, SPAWN_PROCESS
from ..wizard import ids
from ..wizard.state import (
    CONVERTED_V1,
    EXISTING_TASK,
    MIXED_VERSIONS,
    NEW_TASK,
    STATE_VERSION,
    TASK_MODES,
    V2_ROLE_FIELDS,
    VERSION_FIELD,
    WizardState,
)
from .roles import (
    RoleChoices,
    convert_v1_roles,
    earlier_choices,
    earlier_role_fields,
    selection_order,
    settle_confirmed,
)
from .shapes import (
    CONVERTED_V2,
    DEFAULT_HOST,
    DROPPED_ANSWERS,
    STATIC_AFTER_ROLES,
    STATIC_BEFORE_ROLES,
    STATIC_STEP_FIELD,
    STRING_FIELDS,
    SourceReader,
    check_types,
    is_v1,
    source_record,
)

if TYPE_CHECKING:
    from ..defaults import DefaultScopes
    from ..pool import ModelPool


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
            identity.echoes[ids.TASK_PICK] = f"{key} (was {original_key!r})"
    if group and group != group_raw:
        identity.echoes[ids.TASK_GROUP] = f"{group} (was {group_raw!r})"
    if task_id and task_id != id_raw:
        identity.echoes[ids.TASK_ID] = f"{task_id} (was {id_raw!r})"
    return identity


def source_notes(raw: Mapping[str, Any]) -> list[str]:
    """Notes about a source file that hold however it is opened (fresh or resumed); a
    field of the wrong type gives no note (the conversion refuses it)."""
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


def _static_answer(step: str, state: Mapping[str, Any], reader: SourceReader) -> str | None:
    """The v2 answer of a static step the source answered, or None to drop the step."""
    if step == ids.TASK_PICK:
        return ids.NEW_TASK_ANSWER if state["task_mode"] == NEW_TASK else state["task_key"] or None
    if step == ids.REUSE_PREVIOUS:
        reused = reader.optional_bool("reuse_previous")
        if reused is None:
            return None
        return ids.REUSE_ANSWER if reused else ids.CHOOSE_AGAIN_ANSWER
    if step == ids.DIRECTIVE_PICK:
        return ids.WRITE_ANSWER if state["directive"] else ids.SKIP_ANSWER
    if step == ids.RELATED_TASKS_PICK:
        return ids.CHOOSE_ANSWER if state["related_tasks_raw"] else ids.SKIP_ANSWER
    # An empty text answer was never a valid answer: the engine asks the step again.
    value = state[STATIC_STEP_FIELD[step]]
    return value if isinstance(value, str) and value else None


def _confirmed_static_steps(state: Mapping[str, Any], reader: SourceReader) -> list[str]:
    """Static steps a confirmed file settled even where its `answered` list is short."""
    steps: list[str] = [ids.TASK_PICK]
    if state["task_mode"] == NEW_TASK:
        steps += [ids.TASK_GROUP, ids.TASK_ID]
    steps += [ids.BRIEF, ids.TASK_TYPE, ids.APPROVED_PLAN]
    if state["task_mode"] == EXISTING_TASK and reader.optional_bool("reuse_previous") is None:
        steps.append(ids.REUSE_PREVIOUS)
    return [*steps, *STATIC_AFTER_ROLES]


def known_entry_mode(mode: str, source: Path) -> str:
    """`mode`, refused (a `StateFileError`) when it is no entry mode."""
    if mode not in ENTRY_MODES:
        raise StateFileError(
            f"unknown entry mode {mode!r} (expected one of: {', '.join(ENTRY_MODES)})",
            path=source,
            field="host_entry_mode",
        )
    return mode


def _base_state(reader: SourceReader, entry_mode: str) -> dict[str, Any]:
    """The state's static fields, type-checked, before any answer is taken over."""
    source = reader.source
    known_entry_mode(entry_mode, source)
    check_types(reader)
    state: dict[str, Any] = {name: reader.string(name) for name in STRING_FIELDS}
    if not state["project_root"]:
        raise StateFileError(
            "required field is missing: the wizard state needs it to be resumed",
            path=source,
            field="project_root",
        )
    state["host_runtime"] = state["host_runtime"] or DEFAULT_HOST
    if state["task_mode"] not in TASK_MODES:
        raise StateFileError(
            f"unknown task mode {state['task_mode']!r} (expected 'new' or 'existing')",
            path=source,
            field="task_mode",
        )
    state["host_entry_mode"] = entry_mode
    state["available_functions"] = reader.string_list("available_functions")
    state["aborted"] = bool(reader.optional_bool("aborted"))
    # A converted team is shown again before anything runs: never carried as confirmed.
    state["confirmed"] = None
    state["edit_target"] = ""
    return state


def _convert(
    reader: SourceReader,
    state: dict[str, Any],
    profile: Profile | None,
    choose: Callable[[Profile, list[str]], RoleChoices],
    *,
    provenance: str,
    sha256: str,
    asked: list[str] | None = None,
) -> dict[str, Any]:
    """Take the answers over, the role block (`choose`) only with a known task type
    (`asked`: more step ids telling whether leader-session was asked; None: it was)."""
    confirmed = reader.optional_bool("confirmed") is True
    identity = task_identity(state)
    steps = list(dict.fromkeys(reader.string_list("answered")))
    choices = RoleChoices()
    order: list[tuple[str, str]] = []
    if profile is None:
        # Without a known task type there is no role block yet: the wizard asks it again.
        state["task_type"] = ""
        state["approved_plan_path"] = ""
        steps = [s for s in steps if s not in (ids.TASK_TYPE, ids.APPROVED_PLAN)]
        confirmed = False
    else:
        choices = choose(profile, steps)
        if confirmed:
            settle_confirmed(profile, choices)
        leader_session = asked is None or ids.LEADER_SESSION in (*steps, *asked)
        order = selection_order(
            profile, choices, state["host_entry_mode"], leader_session=leader_session
        )
    if confirmed:
        steps += [s for s in _confirmed_static_steps(state, reader) if s not in steps]

    def static(group: tuple[str, ...]) -> list[dict[str, str]]:
        """The answered entries of the static steps of `group` the source settled."""
        out: list[dict[str, str]] = []
        for step in (s for s in group if s in steps):
            answer = _static_answer(step, state, reader)
            if answer is None and confirmed and step == ids.REUSE_PREVIOUS:
                answer = ids.CHOOSE_AGAIN_ANSWER
            if answer is not None and not (
                step == ids.REUSE_PREVIOUS and state["task_mode"] != EXISTING_TASK
            ):
                out.append({"step": step, "answer": answer, "provenance": provenance})
        return out

    role_block = [
        {"step": step, "answer": answer, "provenance": choices.provenance.get(step, provenance)}
        for step, answer in order
    ]
    answered = [*static(STATIC_BEFORE_ROLES), *role_block, *static(STATIC_AFTER_ROLES)]
    for entry in answered:
        if entry["step"] in identity.echoes:
            entry["echo"] = identity.echoes[entry["step"]]
    # The state's own fields, under their names in the file.
    state.update(
        merged(
            None,
            WizardState,
            execution_identity_version=STATE_VERSION,
            role_counts=dict(choices.counts),
            role_models={role: list(refs) for role, refs in choices.models.items()},
            role_selection_order=[step for step, _ in order],
            answered=answered,
            remembered_answers={},
            revision=0,
            legacy_source=source_record(reader.source, sha256),
        )
    )
    return state


def convert_v1(
    raw: Mapping[str, Any],
    *,
    profile: Profile | None,
    pool: ModelPool,
    scopes: DefaultScopes,
    entry_mode: str,
    source: Path,
    sha256: str,
    home_provider: str | None = None,
) -> dict[str, Any]:
    """Convert a parsed v1 state (read from `source`, of digest `sha256`) into a v2 state.

    `profile`: of the v1 task type (None: no known one yet, only static answers carry
    over); `home_provider`: the host's own provider (None: `claude`), for a lead the
    file leaves without one. A `StateFileError` for a field of the wrong type, a
    required one missing, or mixed versions.
    """
    source = Path(source)
    if not is_v1(raw):
        raise StateFileError("not a v1 wizard state", path=source, field=VERSION_FIELD)
    mixed = [name for name in V2_ROLE_FIELDS if name in raw]
    if mixed:
        raise StateFileError(MIXED_VERSIONS, path=source, field=mixed[0])
    reader = SourceReader(raw, source)
    state = _base_state(reader, entry_mode)
    home = home_provider or EARLIER_DEFAULT_PROVIDER

    def choose(profile: Profile, answered: list[str]) -> RoleChoices:
        return convert_v1_roles(
            reader, profile, pool, scopes, entry_mode, state["task_type"], answered, home
        )

    return _convert(reader, state, profile, choose, provenance=CONVERTED_V1, sha256=sha256)


def convert_earlier_v2(
    raw: Mapping[str, Any],
    *,
    profile: Profile | None,
    pool: ModelPool,
    source: Path,
    sha256: str,
    notes: list[str] | None = None,
) -> dict[str, Any]:
    """Convert the earlier okstra's v2-shaped state into okstra's v2 state dict.

    Role choices the profile no longer allows are dropped with a note and asked again
    (docs/compatibility.md). A `StateFileError` for a field of the wrong type (named)
    or a missing project root.
    """
    out_notes = notes if notes is not None else []
    reader = SourceReader(raw, Path(source))
    counts, models, earlier_order = earlier_role_fields(reader)
    entry_mode = reader.string("host_entry_mode") or SPAWN_PROCESS
    state = _base_state(reader, entry_mode)
    if profile is None and (counts or models):
        out_notes.append(
            "roleCounts / roleModels are not carried over: the task type is asked first"
        )

    def choose(profile: Profile, _answered: list[str]) -> RoleChoices:
        return earlier_choices(profile, counts, models, entry_mode, pool, out_notes)

    return _convert(
        reader, state, profile, choose, provenance=CONVERTED_V2, sha256=sha256, asked=earlier_order
    )
