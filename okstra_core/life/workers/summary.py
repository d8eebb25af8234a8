"""The workers of a run in one line (`okstra runs`), as `worker status` reads them.

A run without a `workers/` directory costs one `lstat`; a listing never records ends.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from ...environment import Environment
from ...errors import OkstraError
from . import files
from .observe import WorkerState, observe_team


def shown_state(state: WorkerState) -> str:
    """A worker's state as people read it: a running one's activity, else its status."""
    if state.running and state.activity:
        return state.activity
    return state.status


def team_states(run_dir: Path, environment: Environment) -> dict[str, str]:
    """`{"analyser#1": "stalled", ...}` for the run's started workers, in team order."""
    if not os.path.isdir(run_dir / files.WORKERS_DIR):
        return {}
    try:
        team = observe_team(run_dir, environment, record_ends=False)
    except OkstraError:
        return {}
    return {s.short: shown_state(s) for s in team if not s.leader and s.state != "prepared"}


def summary(states: dict[str, str]) -> str:
    """`2 running · 1 stalled · 3 ended` (`-` without workers)."""
    if not states:
        return "-"
    counted = Counter(
        "ended" if state.startswith(("exited", "stopped", "lost")) else state
        for state in states.values()
    )
    order = ("waiting for input", "idle", "stalled", "running", "ended")
    parts = [f"{counted[name]} {name}" for name in order if counted[name]]
    parts += [f"{n} {name}" for name, n in counted.items() if name not in order]
    return " · ".join(parts)
