"""`config.json`'s settings of a running team: its windows, logs and notices."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..records import config, dataclass

if TYPE_CHECKING:
    from pydantic import StrictBool, StrictInt

# What a run's watcher can tell a person (`[notify]`, `config.json`'s `notify`).
NOTIFY_EVENTS = ("lead-waiting", "worker-ended", "team-done")
DEFAULT_NOTIFY = ("lead-waiting", "team-done")


@dataclass(frozen=True, kw_only=True)
class TeamSettings:
    """`config.json`'s `team`: worker panes per team window, whether an ended worker's
    pane stays open, and the most each worker log keeps (its oldest part is dropped)."""

    __pydantic_config__ = config()

    panes_per_window: StrictInt = 6
    keep_ended_panes: StrictBool = False
    log_limit_mib: StrictInt = 10
