"""`[activity]` of a provider file: how its CLI's screen shows what it is doing.

An interactive agent CLI (the lead, any pane a person works in) is, while it runs, in
one of three states: `running` (working on a turn), `waiting for input` (its turn is
over or it asks a question: a person must type or answer) or `idle` (waiting for
input, and nothing on its screen has changed for `idle_after` seconds). The provider
file says which screens mean what — Python regular expressions, matched against each
of the last `lines` non-blank lines of its pane:

    [activity]
    running = ['esc to interrupt']          # a turn in progress (checked first)
    waiting = ['^❯ ', 'Do you want to']     # its prompt, or a question
    idle = []                               # screens that mean idle at once
    lines = 15
    idle_after = 300

A screen that matches none is `running` while the process lives. Each pattern is at
most 300 characters and is checked when the provider file is loaded.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated

from ..records import config, dataclass
from .rules import DataProblem

if TYPE_CHECKING:
    from pydantic import Field, StrictInt, StrictStr

MAX_PATTERN = 300


@dataclass(frozen=True, kw_only=True)
class ActivitySpec:
    """The screen patterns of a provider's CLI (see the module)."""

    __pydantic_config__ = config()

    running: tuple[Annotated[StrictStr, Field(min_length=1, max_length=MAX_PATTERN)], ...] = ()
    waiting: tuple[Annotated[StrictStr, Field(min_length=1, max_length=MAX_PATTERN)], ...] = ()
    idle: tuple[Annotated[StrictStr, Field(min_length=1, max_length=MAX_PATTERN)], ...] = ()
    lines: Annotated[StrictInt, Field(ge=1, le=200)] = 15
    idle_after: Annotated[StrictInt, Field(ge=1, le=86_400)] = 300

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
            f"idle={self.idle!r}, lines={self.lines}, idle_after={self.idle_after})"
        )


RUNNING = "running"
WAITING = "waiting for input"
IDLE = "idle"


def _shows(patterns: tuple[str, ...], shown: list[str]) -> bool:
    return any(re.search(pattern, line) for pattern in patterns for line in shown)


def classify(lines: list[str], spec: ActivitySpec | None) -> str:
    """`running`, `waiting for input` or `idle` for a live CLI showing `lines` (the
    screen alone: a screen waiting unchanged too long is made `idle` by its caller)."""
    if spec is None:
        return RUNNING
    shown = [line for line in lines if line.strip()][-spec.lines :]
    if _shows(spec.running, shown):
        return RUNNING
    if _shows(spec.waiting, shown):
        return WAITING
    if _shows(spec.idle, shown):
        return IDLE
    return RUNNING
