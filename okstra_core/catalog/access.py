"""How a provider's CLI is given a session id it mints itself, and what it may do:
a worker's `[launch.access]` and the lead's `[launch.lead_access]`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from .. import records
from ..records import dataclass

if TYPE_CHECKING:
    from pydantic import Field, StrictStr

_CONFIG = records.config()


@dataclass(frozen=True, kw_only=True)
class DiscoverSpec:
    """How to find a session id that the CLI minted itself (codex)."""

    __pydantic_config__ = _CONFIG

    glob: StrictStr  # e.g. "{env.CODEX_HOME}/sessions/**/rollout-*.jsonl"
    id_pattern: StrictStr  # regex with one group capturing the id from the file name
    cwd_field: StrictStr = "payload.cwd"  # dotted path in the first JSON line
    # Strict: a boolean or a numeric string is a mistake in the file, not a number.
    timeout_seconds: Annotated[float, Field(strict=True, gt=0, allow_inf_nan=False)] = 10.0
    default_home: StrictStr = ""  # used for {env.X} when X is unset, e.g. "~/.codex"


@dataclass(frozen=True, kw_only=True)
class AccessSpec:
    """`[launch.access]`: a worker's extra arguments at its template's `{access}` element."""

    __pydantic_config__ = _CONFIG

    read_only: tuple[StrictStr, ...] = ()
    write: tuple[StrictStr, ...] = ()


@dataclass(frozen=True, kw_only=True)
class LeadAccessSpec:
    """`[launch.lead_access]`: the lead CLI's extra arguments (right after the program,
    on launch and resume) per access above `ask` (the CLI's own prompts); a level left
    out is refused for its lead (`prepare --lead-access`)."""

    __pydantic_config__ = _CONFIG

    edits: tuple[StrictStr, ...] | None = None  # edit files without asking
    full: tuple[StrictStr, ...] | None = None  # edit and run commands without asking
