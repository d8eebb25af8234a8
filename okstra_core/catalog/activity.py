"""`[activity]` of a provider file: how its CLI's screen shows what it is doing.

A running agent CLI is `running` (on a turn), `waiting for input` (its turn is over or it
asks a question), `idle` (waiting, its screen unchanged for `idle_after` seconds) or
`stalled` (not waiting, nothing new for `stall_after` seconds). The patterns are Python
regular expressions (at most 300 characters, checked on load), matched against each of
the last `lines` non-blank lines of its pane or output, no-break spaces read as spaces:

    [activity]
    running = ['esc to interrupt']          # a turn in progress (checked first)
    waiting = ['^❯ ', 'Do you want to']     # its prompt, or a question
    idle = []                               # screens that mean idle at once
    lines = 15
    idle_after = 300
    stall_after = 120

A screen that matches none is `running` while the process lives.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated

from ..display import screen_line
from ..records import config, dataclass
from .rules import DataProblem

if TYPE_CHECKING:
    from pydantic import Field, StrictInt, StrictStr

MAX_PATTERN = 300
DEFAULT_IDLE_AFTER = 300
DEFAULT_STALL_AFTER = 120


@dataclass(frozen=True, kw_only=True)
class ActivitySpec:
    """The screen patterns of a provider's CLI (see the module)."""

    __pydantic_config__ = config()

    running: tuple[Annotated[StrictStr, Field(min_length=1, max_length=MAX_PATTERN)], ...] = ()
    waiting: tuple[Annotated[StrictStr, Field(min_length=1, max_length=MAX_PATTERN)], ...] = ()
    idle: tuple[Annotated[StrictStr, Field(min_length=1, max_length=MAX_PATTERN)], ...] = ()
    lines: Annotated[StrictInt, Field(ge=1, le=200)] = 15
    idle_after: Annotated[StrictInt, Field(ge=1, le=86_400)] = DEFAULT_IDLE_AFTER
    stall_after: Annotated[StrictInt, Field(ge=1, le=86_400)] = DEFAULT_STALL_AFTER

    def __post_init__(self) -> None:
        for name in ("running", "waiting", "idle"):
            for index, pattern in enumerate(getattr(self, name)):
                try:
                    re.compile(pattern)
                except re.error as exc:
                    raise DataProblem(
                        f"{name}[{index}]", f"not a regular expression ({exc}): {pattern!r}"
                    ) from None

    def __repr__(self) -> str:
        return (
            f"ActivitySpec(running={self.running!r}, waiting={self.waiting!r}, "
            f"idle={self.idle!r}, lines={self.lines}, idle_after={self.idle_after}, "
            f"stall_after={self.stall_after})"
        )


RUNNING = "running"
WAITING = "waiting for input"
IDLE = "idle"
STALLED = "stalled"
# Every activity a live member can show, in the order `worker wait --until` names them.
ACTIVITIES = (RUNNING, WAITING, IDLE, STALLED)


def _shows(patterns: tuple[str, ...], shown: list[str]) -> bool:
    return any(re.search(pattern, line) for pattern in patterns for line in shown)


def classify(lines: list[str], spec: ActivitySpec | None) -> str:
    """`running`, `waiting for input` or `idle` for a live CLI showing `lines` (the
    screen alone: a screen unchanged too long is made `idle` or `stalled` by its
    caller, `settled`)."""
    if spec is None:
        return RUNNING
    shown = [screen_line(line) for line in lines if line.strip()][-spec.lines :]
    if _shows(spec.running, shown):
        return RUNNING
    if _shows(spec.waiting, shown):
        return WAITING
    if _shows(spec.idle, shown):
        return IDLE
    return RUNNING


def settled(state: str, quiet: float, spec: ActivitySpec | None) -> str:
    """A screen's state once it has shown nothing new for `quiet` seconds: waiting that
    long is `idle`, running that long is `stalled`."""
    if state == WAITING and quiet >= (DEFAULT_IDLE_AFTER if spec is None else spec.idle_after):
        return IDLE
    if state == RUNNING and quiet >= (DEFAULT_STALL_AFTER if spec is None else spec.stall_after):
        return STALLED
    return state


def reached(activity: str | None, until: str) -> bool:
    """Whether a member showing `activity` has reached `until` (waiting counts idle)."""
    return activity == until or (until == WAITING and activity == IDLE)
