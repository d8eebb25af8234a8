"""Converting an earlier okstra's state file into okstra's v2 state, in memory.

Both earlier shapes (`okstra_core.compat.shapes`) become a v2 state dict in okstra's
file shape (`okstra_core.wizard.state`): every answer taken over is an `answered`
entry `{step, answer, provenance}` — `converted:v1` for a v1 source, `converted:v2`
for the earlier v2 shape, `default:<scope>` for a model the conversion took from the
role's default candidates — and `legacySource` names the source file (resolved path)
and the sha256 of its bytes. Notes (why something was skipped, slugified or not
carried over) are appended to a list the caller gives. Nothing here writes a file.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..catalog.models import Profile
from ..documents.base import merged
from ..errors import StateFileError
from ..vocabulary import ENTRY_MODES, SPAWN_PROCESS
from ..wizard.ids import (
    APPROVED_PLAN,
    BRIEF,
    CHOOSE_AGAIN_ANSWER,
    CHOOSE_ANSWER,
    DIRECTIVE,
    DIRECTIVE_PICK,
    LEADER_SESSION,
    NEW_TASK_ANSWER,
    RELATED_TASKS,
    RELATED_TASKS_PICK,
    REUSE_ANSWER,
    REUSE_PREVIOUS,
    SKIP_ANSWER,
    TASK_GROUP,
    TASK_ID,
    TASK_PICK,
    TASK_TYPE,
    WRITE_ANSWER,
)
from ..wizard.state import (
    EXISTING_TASK,
    NEW_TASK,
    STATE_VERSION,
    TASK_MODES,
    VERSION_FIELD,
    WizardState,
)
from .companions import source_record
from .identity import TaskIdentity, task_identity
from .lookup import EARLIER_DEFAULT_PROVIDER
from .reader import SourceReader, check_types
from .roles import (
    RoleChoices,
    convert_v1_roles,
    earlier_choices,
    earlier_role_fields,
    selection_order,
    settle_confirmed,
)
from .shapes import (
    CONVERTED_V1,
    CONVERTED_V2,
    DEFAULT_HOST,
    STATIC_AFTER_ROLES,
    STATIC_BEFORE_ROLES,
    STATIC_STEP_FIELD,
    STRING_FIELDS,
    V2_ROLE_FIELDS,
    is_v1,
)

if TYPE_CHECKING:
    from ..defaults import DefaultScopes
    from ..pool import ModelPool

__all__ = ["convert_earlier_v2", "convert_v1"]


def _static_answer(step: str, state: Mapping[str, Any], reader: SourceReader) -> str | None:
    """The v2 answer of a static step the source answered, or None to drop the step."""
    if step == TASK_PICK:
        if state["task_mode"] == NEW_TASK:
            return NEW_TASK_ANSWER
        return state["task_key"] or None
    if step == REUSE_PREVIOUS:
        reused = reader.optional_bool("reuse_previous")
        if reused is None:
            return None
        return REUSE_ANSWER if reused else CHOOSE_AGAIN_ANSWER
    if step == DIRECTIVE_PICK:
        return WRITE_ANSWER if state["directive"] else SKIP_ANSWER
    if step == RELATED_TASKS_PICK:
        return CHOOSE_ANSWER if state["related_tasks_raw"] else SKIP_ANSWER
    # An empty text answer was never a valid answer: the engine asks the step again.
    value = state[STATIC_STEP_FIELD[step]]
    return value if isinstance(value, str) and value else None


def _confirmed_static_steps(state: Mapping[str, Any], reader: SourceReader) -> list[str]:
    """Static steps a confirmed file settled even where its `answered` list is short."""
    steps: list[str] = [TASK_PICK]
    if state["task_mode"] == NEW_TASK:
        steps += [TASK_GROUP, TASK_ID]
    steps += [BRIEF, TASK_TYPE, APPROVED_PLAN]
    if state["task_mode"] == EXISTING_TASK and reader.optional_bool("reuse_previous") is None:
        steps.append(REUSE_PREVIOUS)
    steps += [DIRECTIVE_PICK, DIRECTIVE, RELATED_TASKS_PICK, RELATED_TASKS]
    return steps


def _required(reader: SourceReader, name: str) -> str:
    value = reader.string(name)
    if not value:
        raise StateFileError(
            "required field is missing: the wizard state needs it to be resumed",
            path=reader.source,
            field=name,
        )
    return value


def _without_task_type(state: dict[str, Any], answered: list[str]) -> list[str]:
    """Forget the task type (and its approved plan): without a known one there is no
    role block yet, and the wizard asks it again. Returns the answers still taken over."""
    state["task_type"] = ""
    state["approved_plan_path"] = ""
    return [s for s in answered if s not in (TASK_TYPE, APPROVED_PLAN)]


# ---- the two conversions -------------------------------------------------------------


def _base_state(reader: SourceReader, entry_mode: str) -> dict[str, Any]:
    source = reader.source
    if entry_mode not in ENTRY_MODES:
        raise StateFileError(
            f"unknown entry mode {entry_mode!r} (expected one of: {', '.join(ENTRY_MODES)})",
            path=source,
            field="host_entry_mode",
        )
    check_types(reader)
    state: dict[str, Any] = {name: reader.string(name) for name in STRING_FIELDS}
    state["project_root"] = _required(reader, "project_root")
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


def _lay_out(
    state: dict[str, Any],
    *,
    reader: SourceReader,
    source_answered: list[str],
    confirmed: bool,
    order: list[tuple[str, str]],
    choices: RoleChoices,
    provenance: str,
    identity: TaskIdentity,
    source: Path,
    sha256: str,
) -> dict[str, Any]:
    """Lay the answers out (static before, role block, static after) and fill the rest."""
    steps = list(source_answered)
    if confirmed:
        steps += [s for s in _confirmed_static_steps(state, reader) if s not in steps]
    answered: list[dict[str, str]] = []

    def entry(step: str, answer: str, prov: str) -> dict[str, str]:
        out = {"step": step, "answer": answer, "provenance": prov}
        if step in identity.echoes:
            out["echo"] = identity.echoes[step]
        return out

    for group in (STATIC_BEFORE_ROLES, None, STATIC_AFTER_ROLES):
        if group is None:
            answered += [
                entry(step, answer, choices.provenance.get(step, provenance))
                for step, answer in order
            ]
            continue
        for step in (s for s in group if s in steps):
            answer = _static_answer(step, state, reader)
            if answer is None and confirmed and step == REUSE_PREVIOUS:
                answer = CHOOSE_AGAIN_ANSWER
            if answer is not None and not (
                step == REUSE_PREVIOUS and state["task_mode"] != EXISTING_TASK
            ):
                answered.append(entry(step, answer, provenance))
    # The state's own fields, under their names in the file.
    converted = merged(
        None,
        WizardState,
        execution_identity_version=STATE_VERSION,
        role_counts=dict(choices.counts),
        role_models={role: list(refs) for role, refs in choices.models.items()},
        role_selection_order=[step for step, _ in order],
        answered=answered,
        remembered_answers={},
        revision=0,
        legacy_source=source_record(source, sha256),
    )
    state.update(converted)
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
    """Convert a parsed v1 state into a v2 state dict, in memory.

    Args:
        raw: the parsed v1 JSON object.
        profile: the role profile of the v1 task type, or None when the v1 file has
            no (known) task type yet — then only static answers carry over.
        pool: the model pool (aliases resolve through it).
        scopes: model default scopes (a provider chosen without a model, and the
            default candidates of the first cross-verification role).
        entry_mode: `spawn-process` or `current-session`.
        source: the v1 file (for `legacySource` and error messages).
        sha256: the digest of the v1 bytes.
        home_provider: the host's own provider (None: `claude`), the provider of a
            lead or report writer the file leaves empty.

    Returns:
        A v2 state dict in the v2 file shape (`okstra_core.wizard.state`).

    Raises:
        StateFileError: a v1 field has the wrong type or a required one is missing,
            or the file mixes versions.
    """
    source = Path(source)
    if not is_v1(raw):
        raise StateFileError("not a v1 wizard state", path=source, field=VERSION_FIELD)
    mixed = [name for name in V2_ROLE_FIELDS if name in raw]
    if mixed:
        raise StateFileError(
            "mixed wizard state versions are not allowed", path=source, field=mixed[0]
        )
    reader = SourceReader(raw, source)
    state = _base_state(reader, entry_mode)
    confirmed = reader.optional_bool("confirmed") is True
    identity = task_identity(state)
    v1_answered = list(dict.fromkeys(reader.string_list("answered")))

    if profile is None:
        v1_answered = _without_task_type(state, v1_answered)
        confirmed = False
        order: list[tuple[str, str]] = []
        choices = RoleChoices()
    else:
        choices = convert_v1_roles(
            reader,
            profile,
            pool,
            scopes,
            entry_mode,
            state["task_type"],
            v1_answered,
            home_provider or EARLIER_DEFAULT_PROVIDER,
        )
        if confirmed:
            settle_confirmed(profile, choices)
        order = selection_order(profile, choices, entry_mode)
    return _lay_out(
        state,
        reader=reader,
        source_answered=v1_answered,
        confirmed=confirmed,
        order=order,
        choices=choices,
        provenance=CONVERTED_V1,
        identity=identity,
        source=source,
        sha256=sha256,
    )


def convert_earlier_v2(
    raw: Mapping[str, Any],
    *,
    profile: Profile | None,
    pool: ModelPool,
    scopes: DefaultScopes,
    source: Path,
    sha256: str,
    notes: list[str] | None = None,
) -> dict[str, Any]:
    """Convert the earlier okstra's v2-shaped state into okstra's v2 state dict.

    Its `answered` step ids become answered entries whose answers come from the
    file's fields (static steps) and from `roleCounts` / `roleModels` (role steps);
    role choices this okstra's profile no longer allows are dropped with a note, and
    the engine asks those steps again. The earlier wizard's extra fields are read
    as described in docs/compatibility.md.

    Args:
        raw: the parsed JSON object (`is_earlier_v2(raw)` holds).
        profile: the role profile of its task type, or None (unknown / not chosen).
        pool: the model pool (model refs are checked against it).
        scopes: model default scopes (unused today; kept for symmetry with v1).
        source: the file the state came from (`legacySource`, messages).
        sha256: the digest that names the companion.
        notes: a list to append notes to (dropped choices).

    Raises:
        StateFileError: a field of the wrong type (named), a missing project root.
    """
    del scopes
    source = Path(source)
    out_notes = notes if notes is not None else []
    reader = SourceReader(raw, source)
    counts, models, earlier_order = earlier_role_fields(reader)
    entry_mode = reader.string("host_entry_mode") or SPAWN_PROCESS
    state = _base_state(reader, entry_mode)
    confirmed = reader.optional_bool("confirmed") is True
    identity = task_identity(state)
    answered_ids = list(dict.fromkeys(reader.string_list("answered")))
    if profile is None:
        answered_ids = _without_task_type(state, answered_ids)
        confirmed = False
        if counts or models:
            out_notes.append(
                "roleCounts / roleModels are not carried over: the task type is asked first"
            )
        order: list[tuple[str, str]] = []
        choices = RoleChoices()
    else:
        choices = earlier_choices(profile, counts, models, entry_mode, pool, out_notes)
        if confirmed:
            settle_confirmed(profile, choices)
        asked_leader = LEADER_SESSION in (*answered_ids, *earlier_order)
        order = selection_order(profile, choices, entry_mode, leader_session=asked_leader)
    return _lay_out(
        state,
        reader=reader,
        source_answered=answered_ids,
        confirmed=confirmed,
        order=order,
        choices=choices,
        provenance=CONVERTED_V2,
        identity=identity,
        source=source,
        sha256=sha256,
    )
