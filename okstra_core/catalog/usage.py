"""`[usage]` of a provider file: how its CLI reports what a worker's turn used.

    [usage]
    format = "claude-json"      # or "codex-jsonl"

`claude-json`: the worker's standard output is one JSON result object (`claude -p
--output-format json`): its `result` is the answer, its `usage` the tokens and its
`total_cost_usd` the cost. `codex-jsonl`: the standard output is JSONL events (`codex
exec --json`): `turn.completed` carries the tokens (no cost). The worker template must
ask its CLI for that output; okstra reads it (`okstra_core.life.workers.usage`), shows
the answer's text in place of the JSON, and records the usage on the turn. A provider
without `[usage]` reports nothing okstra reads: its usage shows `—`.
"""

from __future__ import annotations

from typing import Literal

from ..records import config, dataclass

UsageFormat = Literal["claude-json", "codex-jsonl"]
USAGE_FORMATS: tuple[UsageFormat, ...] = ("claude-json", "codex-jsonl")


@dataclass(frozen=True, kw_only=True)
class UsageSpec:
    """How a provider's CLI reports usage (see the module)."""

    __pydantic_config__ = config()

    format: UsageFormat
