"""Words okstra's records share across layers, each defined once.

An entry mode says how the lead is entered: `spawn-process` (okstra starts the lead's
CLI as a new process) or `current-session` (the host session okstra runs in is the
lead). A runner says how one role instance runs: `current-session` (the leader, in
current-session mode), `native-session` (a sub-session of the host) or `cli-wrapper`
(its provider's CLI is spawned). Compare and build with the constants; annotate with
the `Literal` types.
"""

from __future__ import annotations

from typing import Literal

__all__ = [
    "CLI_WRAPPER",
    "CURRENT_SESSION",
    "CURRENT_SESSION_RUNNER",
    "EARLIER_DEFAULT_PROVIDER",
    "ENTRY_MODES",
    "LEAD_ACCESS",
    "LEAD_ASK",
    "NATIVE_SESSION",
    "RUNNERS",
    "SPAWN_PROCESS",
    "EntryMode",
    "LeadAccess",
    "Runner",
]

EntryMode = Literal["spawn-process", "current-session"]
SPAWN_PROCESS: EntryMode = "spawn-process"
CURRENT_SESSION: EntryMode = "current-session"
ENTRY_MODES: tuple[EntryMode, ...] = (SPAWN_PROCESS, CURRENT_SESSION)

# What the lead's own CLI may do without asking (`prepare --lead-access`): `ask` leaves
# it to the CLI's own permission prompts, `edits` lets it edit files, `full` lets it
# edit and run commands (each provider's `[launch.lead_access]` says how).
LeadAccess = Literal["ask", "edits", "full"]
LEAD_ASK: LeadAccess = "ask"
LEAD_ACCESS: tuple[LeadAccess, ...] = (LEAD_ASK, "edits", "full")

Runner = Literal["current-session", "native-session", "cli-wrapper"]
CURRENT_SESSION_RUNNER: Runner = "current-session"
NATIVE_SESSION: Runner = "native-session"
CLI_WRAPPER: Runner = "cli-wrapper"
RUNNERS: tuple[Runner, ...] = (CURRENT_SESSION_RUNNER, NATIVE_SESSION, CLI_WRAPPER)

# The earlier okstra's provider for the lead, the report writer and the executor when
# nobody named one, and of a model its settings named without a provider (`"opus"`).
EARLIER_DEFAULT_PROVIDER = "claude"
