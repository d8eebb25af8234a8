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
    "NATIVE_SESSION",
    "RUNNERS",
    "SPAWN_PROCESS",
    "EntryMode",
    "Runner",
]

EntryMode = Literal["spawn-process", "current-session"]
SPAWN_PROCESS: EntryMode = "spawn-process"
CURRENT_SESSION: EntryMode = "current-session"
ENTRY_MODES: tuple[EntryMode, ...] = (SPAWN_PROCESS, CURRENT_SESSION)

Runner = Literal["current-session", "native-session", "cli-wrapper"]
CURRENT_SESSION_RUNNER: Runner = "current-session"
NATIVE_SESSION: Runner = "native-session"
CLI_WRAPPER: Runner = "cli-wrapper"
RUNNERS: tuple[Runner, ...] = (CURRENT_SESSION_RUNNER, NATIVE_SESSION, CLI_WRAPPER)

# The earlier okstra's provider for the lead, the report writer and the executor when
# nobody named one, and of a model its settings named without a provider (`"opus"`).
EARLIER_DEFAULT_PROVIDER = "claude"
