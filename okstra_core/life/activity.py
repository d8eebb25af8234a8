"""What an interactive agent is doing: `running`, `waiting for input`, `idle` or `stalled`.

The lead's pane is matched against its provider's `[activity]` patterns; what it showed
and since when is kept in `lead-activity.json` (unchanged long enough: idle, stalled)."""

from __future__ import annotations

import contextlib
import hashlib
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from ..catalog.activity import IDLE as IDLE
from ..catalog.activity import WAITING as WAITING
from ..catalog.activity import classify, reached, settled
from ..documents.worker import PaneActivity
from ..environment import Environment
from ..errors import OkstraError
from ..processes import tmux
from ..records import dataclass
from ..store import atomic_write_bytes
from .lead import lead_pane
from .runinfo import RunInfo, read_run
from .workers.observe import provider_activity

MARK = "lead-activity.json"


@dataclass(frozen=True)
class Activity:
    """One look at an agent's pane: its state and its last lines."""

    state: str
    lines: tuple[str, ...]


def _since(value: str, now: datetime) -> float:
    try:
        return (now - datetime.fromisoformat(value)).total_seconds()
    except ValueError:
        return 0.0


def lead_screen(run: RunInfo, environment: Environment) -> Activity | None:
    """The lead's pane, read only when it is the pane launch recorded, on the user's server."""
    lead = run.lead
    if lead.backend != "tmux" or not lead.pane_ref:
        return None
    server, pane = lead_pane(lead, environment)
    probe = tmux.probe_pane(server, pane, environment)
    if probe.found is not True or probe.dead or probe.refused is not None:
        return None
    lines = tmux.pane_lines(server, pane, environment, 40)
    if not lines:
        return None
    provider = str(run.leader.get("provider") or "")
    return Activity(classify(lines, provider_activity(provider, environment)), tuple(lines))


def lead_activity(run: RunInfo, environment: Environment) -> Activity | None:
    """The lead's activity, when it runs in a tmux pane okstra can read (best effort kept
    in `lead-activity.json`)."""
    seen = lead_screen(run, environment)
    if seen is None:
        return None
    run_dir = run.run_dir
    provider = str(run.leader.get("provider") or "")
    now = environment.now()
    digest = hashlib.sha256("\n".join(seen.lines).encode()).hexdigest()
    path = run_dir / MARK
    before = None
    with contextlib.suppress(OkstraError):
        before = PaneActivity.read(path)
    same = before is not None and before.state == seen.state and before.digest == digest
    since = before.since if same and before is not None else now.isoformat(timespec="seconds")
    if not same:
        with contextlib.suppress(OkstraError, OSError):
            mark = PaneActivity(state=seen.state, digest=digest, since=since)
            atomic_write_bytes(path, mark.to_bytes(), durable=False)
    state = settled(seen.state, _since(since, now), provider_activity(provider, environment))
    return Activity(state, seen.lines) if state != seen.state else seen


@dataclass(frozen=True)
class LeadWait:
    """What `okstra status --wait` saw: the activity reached, or why it stopped looking."""

    reached: bool
    timed_out: bool
    activity: str | None


def wait_lead(
    run_dir: Path,
    until: str,
    environment: Environment,
    *,
    timeout: float | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> LeadWait:
    """Look at the lead (every 20 ms to 0.5 s) until it shows `until`, stops running (or its
    pane cannot be read), or `timeout` passes."""
    deadline = None if timeout is None else time.monotonic() + timeout
    pause = 0.02
    while True:
        seen = lead_activity(read_run(run_dir), environment)
        if seen is None or reached(seen.state, until):
            state = seen.state if seen is not None else None
            return LeadWait(reached=seen is not None, timed_out=False, activity=state)
        if deadline is not None and time.monotonic() >= deadline:
            return LeadWait(reached=False, timed_out=True, activity=seen.state)
        sleep(pause)
        pause = min(0.5, pause * 1.5)
