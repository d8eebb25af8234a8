"""What a person can do next with a run: only the actions that can work for it.

`okstra status`, `okstra runs --json` and the app's run detail offer these, never a
command that would only fail:

* `okstra attach <run>` — only while the lead has a tmux pane okstra recorded and has
  not ended (a foreground lead, one never launched or one that ended has no window to
  show);
* `okstra resume <run> --exec` — only when the lead's session id is known (recorded at
  launch, found since, or minted by prepare) and the lead is not running (a running
  lead is refused);
* `okstra resume <run>` — a lead whose session id is not known yet (a CLI that mints
  its own): it looks the id up first, after which `--exec` works.

Neither is offered for a host-session lead (no lead CLI of okstra's), one whose launch
failed, one okstra refuses to act on, or a damaged run.
"""

from __future__ import annotations

import shlex

from .runinfo import RunInfo, resume_command
from .status import LeadStatus

# Lead states whose recorded pane may still be the lead's window.
_WINDOWED = ("running", "launched", "unknown")
# Lead states with nothing to resume: no lead CLI of okstra's (`host-session`), one that
# never started (`launch-failed`), or one okstra will not act on.
_NOTHING = ("host-session", "launch-failed", "refused", "damaged")


def can_attach(lead: LeadStatus) -> bool:
    """The lead has a recorded tmux pane and has not ended."""
    return lead.backend == "tmux" and bool(lead.pane_ref) and lead.state in _WINDOWED


def session_id(run: RunInfo, lead: LeadStatus) -> str | None:
    """The lead's session id when okstra knows it: recorded at launch or found since,
    else the one prepare minted for a CLI that takes it."""
    return lead.session_id or run.minted_session_id


def next_steps(run: RunInfo, lead: LeadStatus) -> tuple[str, ...]:
    """The commands that can work for this run now (see the module's rules), in order."""
    where = shlex.quote(str(run.run_dir))
    steps: list[str] = []
    if can_attach(lead):
        steps.append(f"okstra attach {where}")
    if lead.state in _NOTHING:
        return tuple(steps)
    if session_id(run, lead) is None:
        steps.append(f"okstra resume {where}")  # looks the id up first
    elif not lead.alive:
        steps.append(resume_command(run))
    return tuple(steps)
