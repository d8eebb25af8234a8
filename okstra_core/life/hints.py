"""What a person can do next with a run: only the actions that can work for it.

`attach` while the lead has a live recorded tmux pane; `resume --exec` when its session id
is known and it is not running; `resume` to look an unknown id up first."""

from __future__ import annotations

import shlex

from .runinfo import RunInfo, resume_command
from .status import LeadStatus

# Lead states whose recorded pane may still be the lead's window.
_WINDOWED = ("running", "launched", "unknown")
# Lead states with nothing to resume: no lead CLI of okstra's, or one okstra will not act on.
_NOTHING = ("host-session", "launch-failed", "refused", "damaged")


def session_id(run: RunInfo, lead: LeadStatus) -> str | None:
    """The lead's session id when okstra knows it (recorded, found, or minted by prepare)."""
    return lead.session_id or run.minted_session_id


def next_steps(run: RunInfo, lead: LeadStatus) -> tuple[str, ...]:
    """The commands that can work for this run now, in order."""
    where = shlex.quote(str(run.run_dir))
    steps: list[str] = []
    if lead.backend == "tmux" and lead.pane_ref and lead.state in _WINDOWED:
        steps.append(f"okstra attach {where}")
    if lead.state in _NOTHING:
        return tuple(steps)
    if session_id(run, lead) is None:
        steps.append(f"okstra resume {where}")  # looks the id up first
    elif not lead.alive:
        steps.append(resume_command(run))
    return tuple(steps)
