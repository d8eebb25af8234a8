"""The replies of the wizard protocol's `init` and `step`: `Moved` (the echo and the next
prompt) and `Refused` (why, and the prompt still current). `notes` only when some.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from ..records import config, dataclass

if TYPE_CHECKING:
    from ..wizard import Prompt


@dataclass(frozen=True, kw_only=True)
class Moved:
    """`init`, `step`: the echo of the answer taken (None when none was given) and the
    next prompt; `init` names its state file, and `applied` counts replayed answers."""

    __pydantic_config__ = config(omit_none=("state", "applied"), omit_empty=("notes",))

    ok: Literal[True] = True
    state: str | None = None
    applied: int | None = None
    echo: str | None
    next: Prompt
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Refused:
    """`init --answers`, `step`: the answer was refused (exit 0); the state is unchanged."""

    __pydantic_config__ = config(omit_none=("state", "applied"), omit_empty=("notes",))

    ok: Literal[False] = False
    state: str | None = None
    applied: int | None = None
    error: str
    current: Prompt
    notes: tuple[str, ...] = ()
