"""The team's actions: one typed function per action, for every front end.

The CLI and MCP tools are thin adapters: arguments in, a frozen record out, refusals
raised as `OkstraError`s (a refusal changes nothing on disk)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ..catalog.activity import ACTIVITIES
from ..environment import Environment
from ..errors import DataFileError, FileSystemError, StateInUseError, UsageError
from ..records import config, dataclass, fields_of
from . import limits
from .lead import StopOutcome
from .lead import stop as stop_lead
from .report import check_target, finalize_report, read_run_manifest
from .runinfo import read_run
from .watcher import Watcher, start_watcher, stop_watcher
from .workers import control, files
from .workers.control import AttachTarget as AttachTarget
from .workers.control import Stopped as Stopped
from .workers.control import Waited as Waited
from .workers.control import WorkerDiff as WorkerDiff
from .workers.control import WorkerDiscard as WorkerDiscard
from .workers.control import WorkerMerge as WorkerMerge
from .workers.control import worker_attach as worker_attach
from .workers.control import worker_diff as worker_diff
from .workers.control import worker_discard as worker_discard
from .workers.control import worker_merge as worker_merge
from .workers.observe import WorkerState, observe_team
from .workers.plan import StartRequest
from .workers.start import Started as Started
from .workers.start import send_worker, start_worker


@dataclass(frozen=True, kw_only=True)
class TeamStatus:
    """Every member of the run's team as okstra sees it now (lead first, manifest order)."""

    __pydantic_config__ = config(camel_case=True)

    ok: bool = True
    run_id: str
    run_dir: str
    workers: tuple[WorkerState, ...]


def team_status(run_dir: Path, environment: Environment) -> TeamStatus:
    """Look at the team now, recording ends nobody saw (when the project can be written)."""
    try:
        team = observe_team(run_dir, environment)
    except (FileSystemError, StateInUseError):
        team = observe_team(run_dir, environment, record_ends=False)
    return TeamStatus(run_id=run_dir.name, run_dir=str(run_dir), workers=tuple(team))


def worker_start(
    run_dir: Path,
    environment: Environment,
    *,
    prompt: str,
    who: str | None = None,
    again: bool = False,
    role: str | None = None,
    model: str | None = None,
    source: str | None = None,
    surface: str | None = None,
    shared_tree: bool = False,
) -> Started:
    """Start the worker `who` (or a new one of the dynamic `role` on `model`) with `prompt`.

    Raises `UsageError` (nothing changed) or `LaunchError` (the worker stays `prepared`)."""
    _check_prompt(prompt)
    request = StartRequest(
        who=who, again=again, role=role, model=model, source=source, shared_tree=shared_tree
    )
    started = start_worker(run_dir, request, prompt, environment, surface=surface)
    start_watcher(run_dir, environment)  # a run whose lead okstra did not start, too
    return started


def _check_prompt(prompt: str) -> None:
    if not prompt.strip():
        raise UsageError("the prompt is empty", field="prompt")
    if len(prompt.encode("utf-8", errors="replace")) > limits.MAX_PROMPT_BYTES:
        raise UsageError(
            f"the prompt is larger than {limits.MAX_PROMPT_BYTES:,} bytes", field="prompt"
        )


def _seconds(value: float | None, upper: float, field: str) -> None:
    if value is not None and not 0 <= value <= upper:
        raise UsageError(f"expected seconds in [0, {upper:g}], got {value:g}", field=field)


def worker_wait(
    run_dir: Path,
    environment: Environment,
    whos: Sequence[str],
    *,
    timeout: float | None = None,
    any_one: bool = False,
    until: str | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> Waited:
    """Block until the named workers end (the first with `any_one`), reach the activity
    `until`, or `timeout` seconds pass (`timed_out`, exit code 124)."""
    if not whos:
        raise UsageError("name at least one worker to wait for", field="<who>")
    _seconds(timeout, limits.MAX_WAIT_SECONDS, "timeout")
    if until is not None and until not in ACTIVITIES:
        raise UsageError(
            f"expected an activity ({', '.join(ACTIVITIES)}), got {until!r}", field="until"
        )
    return control.wait(
        run_dir, whos, environment, timeout=timeout, any_one=any_one, until=until, sleep=sleep
    )


@dataclass(frozen=True, kw_only=True)
class WorkerResult:
    """What a worker produced: its result file, else its standard output.

    `text` is at most `RESULT_SHOWN_BYTES` of it unless asked for `full`; `truncated`
    then says so, and `path` is where the whole of it is. A worker that produced
    nothing, or did not finish (stopped, killed by a signal, lost), is not `ok`, and
    `why` says so (what it produced is still given).
    """

    __pydantic_config__ = config(camel_case=True, skip=("data",))

    ok: bool = True
    role_execution_ref: str
    label: str
    status: str
    source: str
    path: str
    size: int
    truncated: bool
    text: str
    why: str | None = None
    data: bytes = b""


def worker_result(
    run_dir: Path,
    environment: Environment,
    who: str,
    *,
    full: bool = False,
    turn: int | None = None,
) -> WorkerResult:
    """The worker's product of its latest turn, or of turn `turn`."""
    found, data = control.result(run_dir, who, environment, turn=turn)
    shown = (
        data
        if full or len(data) <= limits.RESULT_SHOWN_BYTES
        else data[: limits.RESULT_SHOWN_BYTES]
    )
    why = None
    short = found.label.split(" ")[0]
    log = files.worker_dir(run_dir, found.role_execution_ref) / files.OUTPUT
    if not data.strip():
        why = f"{short} produced nothing ({found.status}); what it wrote: {log}"
    elif not found.finished:
        why = f"{short} did not finish ({found.status}): this may be part of an answer; {log}"
    return WorkerResult(
        ok=why is None,
        why=why,
        **fields_of(found, "role_execution_ref label status source path"),
        size=len(data),
        truncated=len(shown) < len(data),
        text=shown.decode("utf-8", errors="replace"),
        data=shown,
    )


def worker_stop(
    run_dir: Path,
    environment: Environment,
    who: str,
    *,
    grace: float = limits.DEFAULT_GRACE_SECONDS,
    sleep: Callable[[float], None] = time.sleep,
) -> Stopped:
    """SIGTERM to what okstra started for `who`, SIGKILL after `grace`; its pane closed."""
    _seconds(grace, limits.MAX_GRACE_SECONDS, "grace")
    return control.stop(run_dir, who, environment, grace=grace, sleep=sleep)


# At most this many workers are stopped at once (each waits up to its grace time).
_STOPPING_AT_ONCE = 16


@dataclass(frozen=True, kw_only=True)
class WorkersStopped:
    """What `worker stop --all` did: one `Stopped` per worker that was running."""

    __pydantic_config__ = config(camel_case=True)

    ok: bool
    workers: tuple[Stopped, ...]


def workers_stop_all(
    run_dir: Path, environment: Environment, *, grace: float = limits.DEFAULT_GRACE_SECONDS
) -> WorkersStopped:
    """Stop every running worker of the run, all at once, each as `worker_stop` does."""
    _seconds(grace, limits.MAX_GRACE_SECONDS, "grace")
    running = [
        s.role_execution_ref
        for s in team_status(run_dir, environment).workers
        if not s.leader and s.running
    ]
    if not running:
        return WorkersStopped(ok=True, workers=())
    with ThreadPoolExecutor(max_workers=min(_STOPPING_AT_ONCE, len(running))) as pool:
        done = list(
            pool.map(lambda ref: control.stop(run_dir, ref, environment, grace=grace), running)
        )
    return WorkersStopped(ok=all(s.ok for s in done), workers=tuple(done))


@dataclass(frozen=True, kw_only=True)
class TeamStopped:
    """What `okstra stop` did: the lead's stop, then the workers'."""

    __pydantic_config__ = config(camel_case=True)

    ok: bool
    lead: StopOutcome
    workers: tuple[Stopped, ...] = ()
    # Why no worker was looked at: the run manifest is damaged (the lead is still handled).
    workers_not_read: str | None = None
    # The run's watcher as the stop found it (`watching`: it was ended first).
    watcher: Watcher | None = None


def team_stop(
    run_dir: Path,
    environment: Environment,
    *,
    grace: float = limits.DEFAULT_GRACE_SECONDS,
    lead_only: bool = False,
) -> TeamStopped:
    """End the run's watcher, stop the lead (so it starts no one else), then every worker;
    with `lead_only`, the lead alone (the watcher goes on watching the workers)."""
    _seconds(grace, limits.MAX_GRACE_SECONDS, "grace")
    watcher = None if lead_only else stop_watcher(run_dir)
    lead = stop_lead(read_run(run_dir), environment, grace=grace)
    if lead_only:
        return TeamStopped(ok=lead.ok, lead=lead)
    try:
        workers = workers_stop_all(run_dir, environment, grace=grace)
    except DataFileError as exc:
        return TeamStopped(ok=lead.ok, lead=lead, workers_not_read=exc.render(), watcher=watcher)
    return TeamStopped(
        ok=lead.ok and workers.ok, lead=lead, workers=workers.workers, watcher=watcher
    )


@dataclass(frozen=True, kw_only=True)
class Finalized:
    """What `report finalize` wrote onto a final report's data file."""

    __pydantic_config__ = config(camel_case=True)

    ok: bool = True
    run_manifest: str
    report: str
    execution_identity_version: int = 2
    execution_roles: tuple[dict[str, object], ...]


def report_finalize(run_dir: Path, report: Path) -> Finalized:
    """Write the run's `executionRoles` (each with its recorded outcome) onto `report`."""
    check_target(report, os.environ, run_dir)
    path, manifest = read_run_manifest(run_dir)
    rows = finalize_report(manifest, report)
    return Finalized(run_manifest=str(path), report=str(report), execution_roles=tuple(rows))


def worker_send(
    run_dir: Path, environment: Environment, who: str, *, prompt: str, surface: str | None = None
) -> Started:
    """Send the ended worker `who` a follow-up in its own conversation; return at once."""
    _check_prompt(prompt)
    started = send_worker(run_dir, who, prompt, environment, surface=surface)
    start_watcher(run_dir, environment)
    return started
