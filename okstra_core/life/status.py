"""The lead's status: what okstra shows of it, and what its run manifest says alone.

`observe` (`okstra_core.life.lead`) starts from `base_status` — the status the run
manifest records, checked (`runinfo`) — and looks at the lead where it runs.
"""

from __future__ import annotations

from typing import Any

from ..records import config, dataclass
from .runinfo import ENDED, LAUNCH_FAILED, RunInfo


@dataclass(frozen=True)
class LeadStatus:
    """The lead of a run as okstra sees it now.

    Attributes:
        state: `prepared` (not launched), `host-session` (the host session is the
            lead), `running`, `launched` (started; okstra cannot tell whether it still
            runs), `exited`, `stopped`, `gone` (ended unseen), `launch-failed`
            (prepare could not start it; `detail` says why), `unknown`, `refused`
            (what the run file names is not what okstra started: a process, a tmux
            server or pane; `detail` says why, nothing was sent), `damaged` (a field
            of the run manifest is not what launch writes; `detail` names it).
        backend: the launch backend (`tmux`, `exec`), when launched.
        exit_status: the CLI's exit status, when known.
        signal: the signal that ended it, when known.
        exited_at: when it ended (ISO), when known.
        session_id: the lead's session id; None while pending discovery.
        pending_id: launched, and the session id is not known yet.
        window_ref / pane_ref / tmux_socket / process_id: where it runs.
        detail: why the state is what it is, when not obvious.
        recorded: this look recorded the end (first look after it).
        note: what this look could not do (record the end on a read-only project).

    Its JSON (`records.to_data`) is the `lead` object of `runs`, `status`, `stop`,
    `attach` and `resume`: every field in camelCase (`recorded` as `recordedNow`), and
    the `label` after the state.
    """

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
    common: dict[str, Any] = {
        "backend": lead.backend,
        "session_id": lead.session_id,
        "window_ref": lead.window_ref,
        "pane_ref": lead.pane_ref,
        "tmux_socket": lead.tmux_socket,
        "process_id": lead.process_id,
    }
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
