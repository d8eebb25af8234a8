"""The replies of `okstra runs`, `status`, `stop` and `resume`, as records.

Each holds the typed row a command looks at as a `spread` field (its keys written in its
place; a key the reply writes again keeps that place with the reply's value).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..records import config, dataclass

if TYPE_CHECKING:
    from pathlib import Path

    from ..life.lead import StopOutcome
    from ..life.resume import ResumeOutcome
    from ..life.runs import RunRow
    from ..life.status import LeadStatus
    from ..life.watcher import Watcher
    from ..life.workers.control import Stopped
    from ..life.workers.observe import WorkerState


@dataclass(frozen=True, kw_only=True)
class ListedRun:
    """One entry of `okstra runs --json`: the run's row (its keys in its place), what
    its lead is doing, its workers' states (`short` → state) and its watcher."""

    __pydantic_config__ = config(spread="row")

    row: RunRow
    activity: str | None
    workers: dict[str, str]
    watcher: Watcher


@dataclass(frozen=True, kw_only=True)
class RunsReply:
    """`okstra runs --json`: the project (None with `--all`), its runs newest first, how
    many there are and how many are not listed (`--limit`), and notes on the index."""

    __pydantic_config__ = config(
        camel_case=True,
        views=("more",),
        first=("ok", "all", "project_root", "runs", "total", "more", "notes"),
    )

    ok: bool = True
    all: bool
    project_root: Path | None
    runs: tuple[ListedRun, ...]
    total: int
    notes: tuple[str, ...] = ()

    @property
    def more(self) -> int:
        return self.total - len(self.runs)


@dataclass(frozen=True, kw_only=True)
class RunStatus:
    """`okstra status --json`: the run's row (its keys in its place), the last lines
    of its lead's window once it ended, what the lead is doing, the workers (the lead
    left out) and the watcher."""

    __pydantic_config__ = config(camel_case=True, spread="row")

    ok: bool = True
    row: RunRow
    last_lines: tuple[str, ...] = ()
    activity: str | None = None
    workers: tuple[WorkerState, ...] = ()
    watcher: Watcher


@dataclass(frozen=True, kw_only=True)
class StopReply:
    """`okstra stop --json`: the lead's stop (its keys in its place), then the team's:
    `ok` (the whole team's, written where the lead's stop has its own), the workers'
    stops, why no worker was read (a damaged run manifest), the watcher as the stop
    found it, and whether the lead alone stopped (`leadOk`)."""

    __pydantic_config__ = config(
        camel_case=True, spread="lead", omit_none=("workers_not_read", "watcher")
    )

    lead: StopOutcome
    ok: bool
    workers: tuple[Stopped, ...] = ()
    workers_not_read: str | None = None
    watcher: Watcher | None = None
    lead_ok: bool


@dataclass(frozen=True, kw_only=True)
class ResumeReply:
    """`okstra resume --json`: the resume (its keys in its place: the sheet's
    participants, what the lookup did), its notes with what the look at the lead could
    not do first, the lead's status, what can work for the run now (`life.hints`) and,
    when `--exec` was refused, why (`error`, and `ok` false)."""

    __pydantic_config__ = config(
        camel_case=True,
        spread="outcome",
        skip=("refused",),
        views=("ok", "error"),
        first=("outcome", "ok", "notes", "lead", "next_steps"),
        omit_none=("error",),
    )

    outcome: ResumeOutcome
    notes: tuple[str, ...]
    lead: LeadStatus
    next_steps: tuple[str, ...]
    refused: str | None = None

    @property
    def ok(self) -> bool:
        return self.outcome.ok and self.refused is None

    @property
    def error(self) -> str | None:
        """Why `--exec` was refused, else why the sheet is still pending (None: neither)."""
        return self.refused or self.outcome.message()
