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
    """`okstra status --json`: the run's row, its lead's last lines, activity, workers."""

    __pydantic_config__ = config(camel_case=True, spread="row")

    ok: bool = True
    row: RunRow
    last_lines: tuple[str, ...] = ()
    activity: str | None = None
    workers: tuple[WorkerState, ...] = ()
    watcher: Watcher


@dataclass(frozen=True, kw_only=True)
class StopReply:
    """`okstra stop --json`: the lead's stop, then the team's (`ok` the whole team's, in
    the place of the lead's own; `leadOk` the lead's alone)."""

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
    """`okstra resume --json`: the resume, notes, the lead's status, the next steps and,
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
