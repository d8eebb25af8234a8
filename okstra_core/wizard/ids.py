"""Step ids and step kinds, defined once.

A static step's id is its kind (`task_pick`, …). Role step ids carry the role (and the
ordinal): `leader-session`, `role-count:<role>`, `role-add:<role>`, `role-model:<role>:<n>`.
The kind keys the text catalog and picks the app's screen.
"""

from __future__ import annotations

from typing import Literal, get_args

from ..records import dataclass

StepKind = Literal[
    "task_pick",
    "task_group",
    "task_id",
    "brief",
    "task_type",
    "approved_plan",
    "base_ref",
    "reuse_previous",
    "leader_session",
    "role_count",
    "role_add",
    "role_model",
    "directive_pick",
    "directive",
    "related_tasks_pick",
    "related_tasks",
    "confirm",
    "edit_target",
    "done",
]
STEP_KINDS: tuple[str, ...] = get_args(StepKind)

TASK_PICK: StepKind = "task_pick"
TASK_GROUP: StepKind = "task_group"
TASK_ID: StepKind = "task_id"
BRIEF: StepKind = "brief"
TASK_TYPE: StepKind = "task_type"
APPROVED_PLAN: StepKind = "approved_plan"
BASE_REF: StepKind = "base_ref"
REUSE_PREVIOUS: StepKind = "reuse_previous"
DIRECTIVE_PICK: StepKind = "directive_pick"
DIRECTIVE: StepKind = "directive"
RELATED_TASKS_PICK: StepKind = "related_tasks_pick"
RELATED_TASKS: StepKind = "related_tasks"
CONFIRM: StepKind = "confirm"
EDIT_TARGET: StepKind = "edit_target"
DONE: StepKind = "done"
# The kinds of the role steps (their ids carry the role: see the prefixes below).
LEADER_SESSION_KIND: StepKind = "leader_session"
ROLE_COUNT_KIND: StepKind = "role_count"
ROLE_ADD_KIND: StepKind = "role_add"
ROLE_MODEL_KIND: StepKind = "role_model"

# Option values of the `reuse_previous` step (the v1 converter writes them too).
REUSE_ANSWER = "reuse"
CHOOSE_AGAIN_ANSWER = "again"
# The one option of the `leader-session` step (the host session leads).
LEADER_SESSION_ANSWER = "continue"
# The `task_pick` option that starts a new task (the others are task keys).
NEW_TASK_ANSWER = "new"
# Options of the gate steps (`directive_pick`, `related_tasks_pick`).
SKIP_ANSWER = "skip"
WRITE_ANSWER = "write"
CHOOSE_ANSWER = "choose"
# Options of the `confirm` step.
CONFIRM_ANSWER = "confirm"
EDIT_ANSWER = "edit"
ABORT_ANSWER = "abort"

# Role step id prefixes.
LEADER_SESSION = "leader-session"
ROLE_COUNT = "role-count"
ROLE_ADD = "role-add"
ROLE_MODEL = "role-model"

_ROLE_KINDS: dict[str, StepKind] = {
    LEADER_SESSION: LEADER_SESSION_KIND,
    ROLE_COUNT: ROLE_COUNT_KIND,
    ROLE_ADD: ROLE_ADD_KIND,
    ROLE_MODEL: ROLE_MODEL_KIND,
}
# The steps `Wizard.accept_defaults` passes with their default (the others need a person).
DEFAULTED_KINDS: frozenset[str] = frozenset(
    {TASK_TYPE, BASE_REF, DIRECTIVE_PICK, RELATED_TASKS_PICK, *_ROLE_KINDS.values()}
)

# Steps never remembered by a rewind: re-asking them should start from the default.
NOT_REMEMBERED = frozenset({CONFIRM, EDIT_TARGET})


@dataclass(frozen=True)
class RoleStepId:
    """A parsed role step id."""

    kind: str  # leader-session | role-count | role-add | role-model
    role: str = ""
    ordinal: int = 0


def count_step(role: str, optional: bool) -> str:
    return f"{ROLE_ADD if optional else ROLE_COUNT}:{role}"


def model_step(role: str, ordinal: int) -> str:
    return f"{ROLE_MODEL}:{role}:{ordinal}"


def parse_role_step(step_id: str) -> RoleStepId | None:
    """Parse `role-model:analyser:2` and friends; None for anything else."""
    if step_id == LEADER_SESSION:
        return RoleStepId(LEADER_SESSION)
    kind, _, rest = step_id.partition(":")
    if kind in (ROLE_COUNT, ROLE_ADD) and rest and ":" not in rest:
        return RoleStepId(kind, rest)
    if kind == ROLE_MODEL:
        role, _, ordinal = rest.rpartition(":")
        if role and ordinal.isdigit() and int(ordinal) >= 1:
            return RoleStepId(kind, role, int(ordinal))
    return None


def is_role_step(step_id: str) -> bool:
    return parse_role_step(step_id) is not None


def step_kind(step_id: str) -> StepKind:
    """The kind of a step id (`role-model:x:2` → `role_model`); unknown ids → `done`."""
    parsed = parse_role_step(step_id)
    if parsed is not None:
        return _ROLE_KINDS[parsed.kind]
    if step_id in STEP_KINDS:
        return step_id  # type: ignore[return-value]
    return DONE
