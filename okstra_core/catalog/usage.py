"""`[usage] format` of a provider file: how its CLI reports what a worker's turn used.

`claude-json`: stdout is one JSON result object (`claude -p --output-format json`): its
`result` is the answer, `usage` the tokens, `total_cost_usd` the cost. `codex-jsonl`:
stdout is JSONL events (`codex exec --json`), `turn.completed` carrying the tokens. The
worker template asks its CLI for that output; okstra reads it
(`okstra_core.life.workers.usage`). Without `[usage]`, a worker's usage shows `—`.
"""

from __future__ import annotations

from typing import Literal

from ..records import config, dataclass

UsageFormat = Literal["claude-json", "codex-jsonl"]


@dataclass(frozen=True, kw_only=True)
class UsageSpec:
    """How a provider's CLI reports usage (see the module)."""

    __pydantic_config__ = config()

    format: UsageFormat
