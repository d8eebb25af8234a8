"""`[activity]` of a provider file: how its CLI's screen shows what it is doing.

An interactive agent CLI (the lead, any pane a person works in) is in one of three
states while it runs: `running` (working on a turn), `waiting for input` (its turn is
over, or it asks a question: a person or the lead must answer) or `idle` (it sits with
nothing to do and nothing asked). The provider file says which screens mean what:

    [activity]
    waiting = ['Do you want to', '\\(y/n\\)']  # regexes, matched against each
    idle = ['^❯ *$']                           # of the last `lines` non-blank lines
    lines = 15                                 # of the pane

`waiting` wins over `idle`; a screen that matches neither is `running` (while the
process lives). Patterns are Python regular expressions, checked when the provider
file is loaded (each at most 300 characters).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated

from ..records import config, dataclass
from .rules import DataProblem

if TYPE_CHECKING:
    from pydantic import Field, StrictInt, StrictStr

MAX_PATTERN = 300


@dataclass(frozen=True, kw_only=True, repr=False)
class ActivitySpec:
    """The screen patterns of a provider's CLI (see the module)."""

    __pydantic_config__ = config()

    waiting: tuple[Annotated[StrictStr, Field(min_length=1, max_length=MAX_PATTERN)], ...] = ()
    idle: tuple[Annotated[StrictStr, Field(min_length=1, max_length=MAX_PATTERN)], ...] = ()
    lines: Annotated[StrictInt, Field(ge=1, le=200)] = 15

    def __post_init__(self) -> None:
        for name in ("waiting", "idle"):
            for index, pattern in enumerate(getattr(self, name)):
                try:
                    re.compile(pattern)
                except re.error as exc:
                    raise DataProblem(
                        f"{name}[{index}]", f"not a regular expression ({exc}): {pattern!r}"
                    ) from None

    def __repr__(self) -> str:
        return f"ActivitySpec(waiting={self.waiting!r}, idle={self.idle!r}, lines={self.lines})"


def classify(lines: list[str], spec: ActivitySpec | None) -> str:
    """`waiting for input`, `idle` or `running` for a live CLI showing `lines`."""
    if spec is None:
        return "running"
    shown = [line for line in lines if line.strip()][-spec.lines :]
    for pattern in spec.waiting:
        rule = re.compile(pattern)
        if any(rule.search(line) for line in shown):
            return "waiting for input"
    for pattern in spec.idle:
        rule = re.compile(pattern)
        if any(rule.search(line) for line in shown):
            return "idle"
    return "running"
