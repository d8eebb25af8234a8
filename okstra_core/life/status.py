"""The lead's status: what okstra shows of it, and what its run manifest says alone
(`base_status`, where `life.lead.observe` starts from), and what a person can do next
with a run: `attach` while the lead has a live recorded tmux pane; `resume --exec` when its
session id is known and it is not running; `resume` to look an unknown id up first."""

from __future__ import annotations

import shlex
from typing import Any

from ..records import config, dataclass, fields_of
from .runinfo import ENDED, LAUNCH_FAILED, RunInfo, resume_command

# Lead states whose recorded pane may still be the lead's window.
_WINDOWED = ("running", "launched", "unknown")
# Lead states with nothing to resume: no lead CLI of okstra's, or one okstra will not act on.
_NOTHING = ("host-session", "launch-failed", "refused", "damaged")


@dataclass(frozen=True)
class LeadStatus:
    """The lead of a run as okstra sees it now; `detail` says why its `state` is what it is,
    `recorded` that this look recorded the end, `note` what it could not do."""

    __pydantic_config__ = config(
        camel_case=True,
        aliases={"recorded": "recordedNow"},
        views=("label",),
        first=("state", "label"),
    )

    state: str
    backend: str | None = None
    exit_status: int | None = None
    signal: int | None = None
    exited_at: str | None = None
    session_id: str | None = None
    pending_id: bool = False
    window_ref: str | None = None
    pane_ref: str | None = None
    tmux_socket: str | None = None
    process_id: int | None = None
    detail: str | None = None
    recorded: bool = False
    note: str | None = None

    @property
    def alive(self) -> bool:
        return self.state == "running"

    @property
    def ended(self) -> bool:
        return self.state in ENDED

    def label(self) -> str:
        """`running`, `exited 1`, `pending id`, `prepared`, … (the `runs` column)."""
        if self.state in ("exited", "stopped"):
            if self.signal is not None:
                return f"{self.state} (signal {self.signal})"
            if self.exit_status is not None:
                return f"{self.state} {self.exit_status}"
            return self.state
        if self.state == "running" and self.pending_id:
            return "running, pending id"
        if self.state == "launched" and self.pending_id:
            return "pending id"
        if self.state == LAUNCH_FAILED:
            return "launch failed"
        return self.state


def base_status(run: RunInfo) -> LeadStatus:
    """The lead's status as its run manifest records it (`damaged` if a field is bad)."""
    lead = run.lead
    common = fields_of(lead, "backend session_id window_ref pane_ref tmux_socket process_id")
    damage = lead.damage or run.damage
    if damage:
        return LeadStatus(state="damaged", detail="; ".join(damage), **common)
    if lead.status in ENDED:
        return LeadStatus(
            state=str(lead.status),
            exit_status=lead.exit_status,
            signal=lead.exit_signal,
            exited_at=lead.exited_at,
            detail=lead.end_detail,
            **common,
        )
    if lead.status == "launched":
        return LeadStatus(state="launched", pending_id=lead.session_id is None, **common)
    if lead.status == LAUNCH_FAILED:
        return LeadStatus(state=LAUNCH_FAILED, detail=lead.end_detail, **common)
    if run.entry_mode == "current-session" or lead.runner == "current-session":
        return LeadStatus(state="host-session", **common)
    return LeadStatus(state="prepared", **common)


def with_changes(base: LeadStatus, **changes: Any) -> LeadStatus:
    """`base` with some fields changed."""
    return LeadStatus(**{**base.__dict__, **changes})


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
