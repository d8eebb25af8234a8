"""What an interactive agent is doing: `running`, `waiting for input` or `idle`.

A pane's last lines are read (through the user's own tmux server only) and matched
against the provider's `[activity]` patterns (`okstra_core.catalog.activity`); a lead
that does not run has no activity (its state says how it ended). A worker is a
one-shot run: while its process lives it is `running`.
"""

from __future__ import annotations

from ..catalog import load_catalog
from ..catalog.activity import classify
from ..environment import Environment
from ..errors import OkstraError
from .workers.tmux import capture, server_at

RUNNING = "running"
WAITING = "waiting for input"
IDLE = "idle"


def pane_activity(
    provider_id: str, pane: str | None, socket: str | None, environment: Environment
) -> tuple[str | None, list[str]]:
    """(activity, the pane's last lines) of a live pane of `provider_id`'s CLI.

    None when okstra cannot read the pane (not tmux, not the user's server, gone).
    """
    server = server_at(socket, environment)
    if server is None or not pane or not pane.startswith("%"):
        return None, []
    lines = capture(server, pane)
    if not lines:
        return None, []
    try:
        provider = load_catalog(environment).provider(provider_id)
    except OkstraError:
        return RUNNING, lines
    return classify(lines, provider.activity), lines
