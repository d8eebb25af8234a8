"""Words okstra's records share across layers (entry modes, runners), each defined once."""

from __future__ import annotations

from typing import Literal

EntryMode = Literal["spawn-process", "current-session"]
SPAWN_PROCESS: EntryMode = "spawn-process"
CURRENT_SESSION: EntryMode = "current-session"
ENTRY_MODES: tuple[EntryMode, ...] = (SPAWN_PROCESS, CURRENT_SESSION)

# What the lead's CLI may do without asking: `ask` (its own prompts), `edits`, `full`.
LeadAccess = Literal["ask", "edits", "full"]
LEAD_ASK: LeadAccess = "ask"
LEAD_ACCESS: tuple[LeadAccess, ...] = (LEAD_ASK, "edits", "full")

Runner = Literal["current-session", "native-session", "cli-wrapper"]
CURRENT_SESSION_RUNNER: Runner = "current-session"
NATIVE_SESSION: Runner = "native-session"
CLI_WRAPPER: Runner = "cli-wrapper"
RUNNERS: tuple[Runner, ...] = (CURRENT_SESSION_RUNNER, NATIVE_SESSION, CLI_WRAPPER)

# The earlier okstra's default provider (also of a bare model name such as `"opus"`).
EARLIER_DEFAULT_PROVIDER = "claude"
