"""What a running worker is doing: `running`, `waiting for input`, `idle` or `stalled`.

The last lines of its `output.log` are matched against the provider's `[activity]`
patterns, and the log's last write says how long it has been quiet: past `idle_after`
while waiting it is `idle`, otherwise past `stall_after` (120 s by default) `stalled`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from ...catalog import load_catalog
from ...catalog.activity import STALLED, ActivitySpec, classify, settled
from ...environment import Environment
from ...errors import OkstraError
from ...records import dataclass
from . import files


@dataclass(frozen=True)
class WorkerActivity:
    """One look at a running worker: its activity and, when stalled, what okstra knows."""

    state: str
    quiet_seconds: int
    detail: str | None = None


def provider_activity(provider_id: str, environment: Environment) -> ActivitySpec | None:
    """The provider's `[activity]` (None when it has none, or its file does not load)."""
    try:
        spec: ActivitySpec | None = load_catalog(environment).provider(provider_id).activity
    except OkstraError:
        return None
    return spec


def iso_time(value: str | None) -> datetime | None:
    """An ISO time as an aware datetime (UTC when naive); None when missing or malformed."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def worker_activity(
    run_dir: Path,
    ref: str,
    spec: ActivitySpec | None,
    *,
    started_at: str | None,
    now: datetime,
) -> WorkerActivity:
    """The activity of the running worker `ref` of the run (see the module)."""
    count = spec.lines if spec is not None else 15
    lines = files.tail_lines(run_dir, ref, count)
    since = files.last_written(run_dir, ref) or iso_time(started_at) or now
    quiet = max(0.0, (now - since).total_seconds())
    state = settled(classify(lines, spec), quiet, spec)
    detail = None
    if state == STALLED:
        detail = f"no output for {int(quiet)} s" + (f"; last: {lines[-1]}" if lines else "")
    return WorkerActivity(state=state, quiet_seconds=int(quiet), detail=detail)
