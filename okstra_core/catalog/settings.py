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
    """`config.json`'s `team`: how a running team is shown and bounded.

    Attributes:
        panes_per_window: worker panes in one team window before another opens.
        keep_ended_panes: keep an ended worker's pane open (its lines are in its log).
        log_limit_mib: the most each worker log keeps (its oldest part is dropped).
    """

    __pydantic_config__ = config()

    panes_per_window: StrictInt = 6
    keep_ended_panes: StrictBool = False
    log_limit_mib: StrictInt = 10
