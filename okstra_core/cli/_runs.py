"""`okstra runs|status|attach|stop`: the project's runs and the life of their lead.

Text for people by default, one JSON document with `--json`. Looking at a run records its
lead's exit the first time it is seen.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..display import age, inert
from ..environment import Environment
from ..errors import OkstraError, UsageError
from ..records import config, dataclass, to_data
from . import RUN_ARG, add_command, confirmed, json_flag, run_dir, say, seconds
from ._human import text_table

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..life.lead import StopOutcome
    from ..life.prune import PruneOutcome
    from ..life.runs import RunRow
    from ..life.watcher import Watcher
    from ..life.workers.control import Stopped
    from ..life.workers.observe import WorkerState

# What `status` shows of a lead's last lines: at most this many, each cut to this length.
_LAST_LINES = 20
_MAX_LINE = 1000
# How many runs `okstra runs` lists unless asked (`--limit`): a screen's worth and more;
# the listing of a project with thousands of runs costs its index and these rows.
RUNS_LIMIT = 100


# The replies, as records: each holds the typed row a command looks at as a `spread`
# field (its keys written in its place; a key the reply writes again keeps that place).
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


def _limit(text: str) -> int:
    if not text.isdigit() or len(text) > 9:
        raise argparse.ArgumentTypeError(
            f"expected a whole number of runs (0: every run), got {text!r}"
        )
    return int(text)


def register(sub: Any) -> None:
    """Add `runs`, `status`, `attach` and `stop` to the top-level parser."""
    runs = add_command(
        sub, "runs", "this project's runs and their lead's status, newest first",
        "okstra runs               this project's runs, newest first",
        "okstra runs --all         every project's runs",
        "okstra runs --prune       remove incomplete run directories (asks first)",
        "okstra runs --json | jq '.runs[0]'",
        args=(
            ("--all", dict(action="store_true", help="every project's runs (central index)")),
            ("--limit", dict(type=_limit, default=RUNS_LIMIT, metavar="N",
                             help=f"the N newest runs (default {RUNS_LIMIT}; 0: every run)")),
            ("--prune", dict(action="store_true", help="remove incomplete run directories "
                             "(left by prepares that did not finish), asking first")),
            ("--yes", dict(action="store_true",
                           help="with --prune: remove without asking (headless)")),
            ("--project-root", dict(default=".", help="a directory inside the project "
                                    "(default: the current directory)")),
        ),
    )  # fmt: skip
    json_flag(runs, _runs, _runs_human)
    status = add_command(
        sub, "status", "a run and its lead: running, exited N, …",
        "okstra status requirements-discovery-001",
        "okstra status perf/widget          the task's newest run",
        "okstra status perf/widget --json",
        "okstra status perf/widget --wait waiting --timeout 600",
        args=(
            RUN_ARG,
            ("--wait", dict(choices=("waiting", "idle"), help="first wait until the lead "
                            "waits for input (or is idle), or stops running")),
            ("--timeout", dict(type=seconds("--timeout", 0, 7 * 86400), metavar="SECONDS",
                               help="with --wait: give up after this long (exit 124)")),
        ),
    )  # fmt: skip
    json_flag(status, _status, lambda status: say(status_text(status)))
    attach = add_command(
        sub, "attach",
        "show the lead's tmux window, or a worker's pane (switch-client inside tmux, else attach)",
        "okstra attach requirements-discovery-001",
        "okstra attach perf/widget",
        args=(
            RUN_ARG,
            ("who", dict(nargs="?", help="a worker's pane instead (e.g. analyser#1)")),
        ),
    )  # fmt: skip
    attach.set_defaults(handler=_attach, human=_attach_human)
    stop = add_command(
        sub, "stop",
        "stop the lead (Ctrl-C, SIGTERM) and every running worker; kill after --grace",
        "okstra stop requirements-discovery-001",
        "okstra stop perf/widget --grace 30",
        "okstra stop perf/widget --lead-only     the workers run on",
        args=(
            RUN_ARG,
            ("--grace", dict(type=seconds("--grace", 0, 3600, closed=False), default=10.0,
                             metavar="SECONDS", help="how long the lead gets to stop before "
                             "it is killed (default 10)")),
            ("--lead-only", dict(action="store_true",
                                 help="stop the lead alone (its workers run on)")),
        ),
    )  # fmt: skip
    json_flag(stop, _stop, lambda reply: say(stop_text(reply)))


def _runs(ns: argparse.Namespace) -> tuple[RunsReply | PruneOutcome, int]:
    from ..life.index import note_of as index_note
    from ..life.runs import all_runs, newest_runs
    from ..life.watcher import watcher_of
    from ..life.workers.observe import team_states

    environment = Environment.real()
    now = environment.now()
    if ns.yes and not ns.prune:
        raise UsageError("--yes applies to --prune", field="--yes")
    if ns.prune:
        if ns.all:
            raise UsageError("--prune works on this project's runs, not with --all", field="--all")
        return _prune(ns, environment)
    limit = ns.limit or None  # 0: every run
    if ns.all:
        rows = all_runs(environment)
        total = len(rows)
        rows = rows[:limit] if limit else rows
        root = None
    else:
        root = _project(ns.project_root, environment)
        rows, total = newest_runs(root, environment, limit)
    notes = [] if root is None else [n for n in (index_note(root),) if n is not None]
    listed = tuple(
        ListedRun(
            row=row.at(now),
            activity=_activity(row, environment),
            workers=team_states(row.run_dir, environment) if row.state == "ok" else {},
            watcher=watcher_of(row.run_dir),
        )
        for row in rows
    )
    return RunsReply(
        all=bool(ns.all), project_root=root, runs=listed, total=total, notes=tuple(notes)
    ), 0


def _project(start: str, environment: Any) -> Path:
    from ..life.project import UnsafeProjectError
    from ..life.runs import project_root_or_error

    try:
        return project_root_or_error(Path(start), environment.env)
    except UnsafeProjectError:
        raise
    except OkstraError as exc:
        raise UsageError(f"{exc.message}; `okstra runs --all` lists every project's runs") from None


def _runs_human(result: RunsReply | PruneOutcome) -> None:
    if isinstance(result, RunsReply):
        for note in result.notes:
            print(f"okstra: note: {inert(note)}", file=sys.stderr, flush=True)
    say(runs_text(result))


def _prune(ns: argparse.Namespace, environment: Any) -> tuple[PruneOutcome, int]:
    """`runs --prune`: ask first on a terminal; headless, `--yes` is required."""
    from ..catalog import load_catalog
    from ..life import prune as pruning
    from ..life.worktrees import worktrees_root
    from ..prepare.resolve import project_id_of

    root = _project(ns.project_root, environment)
    found = pruning.leftovers(root)
    # The project's writers' worktrees whose runs are gone.
    where = worktrees_root(load_catalog(environment).config.worktrees_dir, environment.env)
    stale = pruning.gone_worktrees(root, project_id_of(root), where, environment.env)
    removable = [lo.place.path for lo in found if lo.kept is None] + [p for p, _ in stale]
    listed = "\n".join(f"  {inert(path)}" for path in removable)
    if (
        removable
        and not ns.yes
        and not confirmed(
            "okstra: incomplete run directories (left by prepares that did not finish) and "
            f"writers' worktrees of runs that are gone (their branches stay):\n{listed}\n"
            f"Remove {len(removable)}?",
            f"okstra runs --prune would remove {len(removable)} incomplete run "
            f"director{'y' if len(removable) == 1 else 'ies'} or worktrees of gone "
            f"runs:\n{listed}\nthere is no terminal to ask: give --yes to remove them",
            terminal=sys.stdin.isatty() and sys.stderr.isatty() and not ns.json,
        )
    ):
        kept = tuple(
            pruning.Leftover(place=lo.place, kept=lo.kept or "not removed: you did not confirm")
            for lo in found
        )
        return pruning.PruneOutcome(project_root=root, kept=kept), 0
    outcome = pruning.prune(root)
    outcome = replace(outcome, worktrees=pruning.prune_worktrees(root, stale, environment.env))
    return outcome, 0 if outcome.ok else 1


def _last_lines(timeline: Path, run_id: str) -> tuple[tuple[str, ...], str | None]:
    """The last lines of the run's last `lead-exited` event (strings only, bounded)."""
    from ..documents.views import LeadExitGlance
    from ..store import read_log

    try:
        records = read_log(timeline, what="task timeline").records
    except OkstraError as exc:
        return (), f"its last lines cannot be read: {exc.render()}"
    last: LeadExitGlance | None = None
    for record in records:
        glance = LeadExitGlance.of(record)
        if glance is not None and glance.run_id == run_id and glance.event == "lead-exited":
            last = glance
    lines = last.last_lines if last is not None else None
    if not isinstance(lines, list):
        return (), None
    kept = [line[:_MAX_LINE] for line in lines if isinstance(line, str)]
    return tuple(kept[-_LAST_LINES:]), None


def _status(ns: argparse.Namespace) -> tuple[RunStatus, int]:
    from ..life.actions import team_status
    from ..life.project import place_of
    from ..life.runs import run_row
    from ..life.watcher import watcher_of

    environment = Environment.real()
    run = run_dir(ns.run)
    place = place_of(run)
    if place is None:  # locate_run gives run directories of a project only
        raise UsageError(f"not a run directory of a project: {run}", field="<run>")
    code = _wait_for_lead(ns, run, environment)
    row = run_row(place, environment).at(environment.now())
    last_lines: tuple[str, ...] = ()
    if row.lead is not None and row.lead.ended:
        last_lines, note = _last_lines(place.task_root / "timeline.jsonl", place.name)
        if note is not None and row.note is None:
            row = replace(row, note=note)
    activity = _activity(row, environment)
    workers: tuple[WorkerState, ...] = ()
    if row.problem is None:
        # A look records ends nobody saw (a read-only or locked run: it only looks).
        workers = tuple(w for w in team_status(run, environment).workers if not w.leader)
    status = RunStatus(
        row=row, last_lines=last_lines, activity=activity, workers=workers, watcher=watcher_of(run)
    )
    return status, code


def _wait_for_lead(ns: argparse.Namespace, run_dir: Path, environment: Any) -> int:
    """`--wait`: 0 once the lead shows it (or no wait), 1 if it stopped first, 124: timeout."""
    from ..life.activity import IDLE, WAITING, wait_lead

    if ns.wait is None:
        if ns.timeout is not None:
            raise UsageError("--timeout goes with --wait", field="--timeout")
        return 0
    until = WAITING if ns.wait == "waiting" else IDLE
    seen = wait_lead(run_dir, until, environment, timeout=ns.timeout)
    return 0 if seen.reached else 124 if seen.timed_out else 1


def _activity(row: RunRow, environment: Any) -> str | None:
    """`running`, `waiting for input` or `idle` of the row's lead (None unless it runs)."""
    from ..life.activity import lead_activity

    if row.lead is None or not row.lead.alive or row.info is None:
        return None
    seen = lead_activity(row.info, environment)
    return seen.state if seen is not None else None


def _attach(ns: argparse.Namespace) -> tuple[dict[str, Any], int]:
    from ..life.actions import worker_attach
    from ..life.attach import plan_attach, run_switch
    from ..life.lead import read_run

    environment = Environment.real()
    run = run_dir(ns.run)
    switch_env: Mapping[str, str]
    exec_env: Mapping[str, str]
    if ns.who:
        target = worker_attach(run, environment, ns.who)
        payload: dict[str, Any] = {"ok": True, "worker": target.label, "command": list(target.argv)}
        argv, switch_env, exec_env = target.argv, target.env, target.env
        switch = target.switch
    else:
        plan = plan_attach(read_run(run), environment)
        payload = to_data(plan)
        if plan.argv is None:
            return payload, 1
        argv, switch_env, exec_env = plan.argv, plan.env or {}, plan.env or os.environ
        switch = plan.switch
    if switch:
        problem = run_switch(argv, switch_env)
        if problem is not None:
            payload.update(ok=False, error=problem)
        return payload, 0 if problem is None else 1
    # Outside tmux: this terminal becomes a tmux client of the session. tmux itself
    # would say only "open terminal failed: not a terminal".
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError(
            "okstra attach shows the run in this terminal, and there is none here "
            f"(standard input or output is not a terminal): run it in a terminal, or see "
            f"the run with `okstra status {ns.run}`"
        )
    try:
        os.execvpe(argv[0], list(argv), dict(exec_env))
    except OSError as exc:
        payload.update(ok=False, error=f"could not run tmux: {exc.strerror or exc}")
    return payload, 1


def _attach_human(payload: dict[str, Any]) -> None:
    if payload.get("error"):
        print(f"okstra: {inert(payload['error'])}", file=sys.stderr)
        return
    say(
        f"okstra: switched to the lead of {inert(payload['run'])} "
        f"({inert(payload['lead']['label'])})\n"
    )


def _stop(ns: argparse.Namespace) -> tuple[StopReply, int]:
    from ..life.actions import team_stop

    outcome = team_stop(run_dir(ns.run), Environment.real(), grace=ns.grace, lead_only=ns.lead_only)
    # The lead's stop, then the team's (as the typed outcome names them).
    team = {f.name: getattr(outcome, f.name) for f in fields(outcome)}
    return StopReply(lead_ok=outcome.lead.ok, **team), 0 if outcome.ok else 1


def runs_text(result: RunsReply | PruneOutcome) -> str:
    """`okstra runs`: a table of the runs, newest first (or what `--prune` did)."""
    if not isinstance(result, RunsReply):
        return prune_text(result)
    if not result.runs:
        where = "any project" if result.all else f"this project ({inert(result.project_root)})"
        return f"no runs in {where}\n"
    from ..life.workers.observe import summary

    headers = ["RUN", "TASK", "TYPE", "TEAM", "BACKEND", "LEAD", "WORKERS", "WATCHER", "AGE"]
    if result.all:
        headers.append("PROJECT")
    rows = []
    for listed in result.runs:
        run = listed.row
        lead = run.lead_status() + (f" ({listed.activity})" if listed.activity else "")
        if run.problem is not None:
            lead = f"{lead}: {run.problem}"
        elif run.note:
            lead = f"{lead} (note: {run.note})"
        row = [
            run.run_id,
            run.task_key,
            run.task_type or "-",
            "?" if (size := run.team_size) is None else str(size),
            run.backend or "-",
            lead,
            summary(listed.workers),
            listed.watcher.state or "-",
            age(run.age_seconds),
        ]
        if result.all:
            row.append(str(run.project_root))
        rows.append(row)
    table, more = text_table(headers, rows, fold=("LEAD",)), result.more
    older = "older run" if more == 1 else "older runs"
    return table + (f"… {more:,} {older} not shown (--limit 0 lists every run)\n" if more else "")


def prune_text(outcome: PruneOutcome) -> str:
    """`okstra runs --prune`: what was removed, and what was kept with why."""
    lines = [f"removed  {inert(path)}" for path in outcome.removed_dirs]
    lines += [f"removed  {inert(path)} (worktree of a gone run)" for path in outcome.worktrees]
    lines += [f"kept     {inert(k.run_dir)}: {inert(k.kept)}" for k in outcome.kept]
    if not lines:
        lines = [f"no incomplete run directories in {inert(outcome.project_root)}"]
    return "\n".join(lines) + "\n"


def status_text(status: RunStatus) -> str:
    """`okstra status`: the run, its lead, watcher, next steps, workers and last lines."""
    run = status.row
    team = run.team_size if run.team_size is not None else "?"
    kind = inert(run.task_type or "?")
    lines = [f"run      {inert(run.run_ref)}  ({kind}, team of {team})"]
    lines += _lead_lines(status)
    if run.note:
        lines.append(f"note     {inert(run.note)}")
    lines.append(f"dir      {inert(run.run_dir)}")
    watcher = status.watcher
    if watcher.state not in (None, "not started"):
        told = ", ".join(watcher.events) or "nothing"
        lines.append(f"watcher  {inert(watcher.state)} (tells {inert(told)})")
    # Only what can work for this run: `attach` with a window, `resume` with an id.
    for step in run.next_steps:
        lines.append(f"{step.split()[1]:<9}{inert(step)}")
    lines += [f"worker   {inert(_worker_shown(worker))}" for worker in status.workers]
    if status.last_lines:
        lines.append("last lines of its window:")
        lines += [f"  | {inert(line)}" for line in status.last_lines]
    return "\n".join(lines) + "\n"


def _lead_lines(status: RunStatus) -> list[str]:
    """The lead's lines of `status`: its state (or the run's problem), session and end."""
    run, lead = status.row, status.row.lead
    if run.problem is not None:
        lines = [f"lead     {run.lead_status()}: {inert(run.problem)}"]
    else:
        line = f"lead     {inert(run.lead_status())}"
        line += f" ({status.activity})" if status.activity else ""
        if lead is not None:
            pid = f"pid {lead.process_id}" if lead.process_id else None
            where = lead.window_ref or pid
            line += f" — {inert(lead.backend)}" if lead.backend else ""
            line += f" {inert(where)}" if where else ""
        lines = [line]
    if lead is None:
        return lines
    if lead.session_id:
        lines.append(f"session  {inert(lead.session_id)}")
    if lead.exited_at:
        lines.append(f"ended    {inert(lead.exited_at)}")
    if lead.detail:
        lines.append(f"note     {inert(lead.detail)}")
    return lines


def _worker_shown(worker: WorkerState) -> str:
    """A worker's line of `status`: its activity (or status), model and usage."""
    from ..life.workers.usage import usage_text

    state = worker.activity if worker.state == "running" else None
    shown = f"{worker.short}  {state or worker.status}  {worker.model_ref or ''}"
    shown += f"  usage {usage_text(worker.usage)}"
    if worker.activity_detail:
        shown += f"  ({worker.activity_detail})"
    return shown


def stop_text(reply: StopReply) -> str:
    """`okstra stop`: what happened to the lead, then to each worker."""
    workers = "".join(
        inert(f"okstra: stopped {w.worker.short}: now {w.worker.status}") + "\n"
        for w in reply.workers
    )
    if reply.workers_not_read:
        workers += inert(f"okstra: no worker was stopped: {reply.workers_not_read}") + "\n"
    stop = reply.lead
    run = inert(stop.run_ref)
    label = inert(stop.after.label())
    if not stop.was_running:
        return f"okstra: the lead of {run} is not running ({label})\n" + workers
    if not reply.lead_ok:
        return f"okstra: the lead of {run} is still running ({label})\n" + workers
    steps = inert(", ".join(stop.steps))
    return (
        f"okstra: stopped the lead of {run} ({label}): {steps}\n"
        + workers
        + f"okstra: to resume it: {inert(stop.resume_command)}\n"
    )
