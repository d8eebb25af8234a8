"""The text for people of `okstra runs`, `status` and `stop`, read from their replies
(`_run_replies`): a table, a few lines. Every value from a run's files is made inert.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..display import age, inert
from ._human import text_table
from ._run_replies import RunsReply

if TYPE_CHECKING:
    from ..life.prune import PruneOutcome
    from ..life.workers.observe import WorkerState
    from ._run_replies import RunStatus, StopReply

__all__ = ["prune_text", "runs_text", "status_text", "stop_text"]


def runs_text(result: RunsReply | PruneOutcome) -> str:
    """`okstra runs`: a table of the runs, newest first (or what `--prune` did)."""
    if not isinstance(result, RunsReply):
        return prune_text(result)
    if not result.runs:
        where = "any project" if result.all else f"this project ({inert(result.project_root)})"
        return f"no runs in {where}\n"
    from ..life.workers.summary import summary

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
    more = result.more
    if not more:
        return text_table(headers, rows, fold=("LEAD",))
    older = "older run" if more == 1 else "older runs"
    return (
        text_table(headers, rows, fold=("LEAD",))
        + f"… {more:,} {older} not shown (--limit 0 lists every run)\n"
    )


def prune_text(outcome: PruneOutcome) -> str:
    """`okstra runs --prune`: what was removed, and what was kept with why."""
    lines = [f"removed  {inert(path)}" for path in outcome.removed_dirs]
    lines += [f"removed  {inert(path)} (worktree of a gone run)" for path in outcome.worktrees]
    lines += [f"kept     {inert(k.run_dir)}: {inert(k.kept)}" for k in outcome.kept]
    if not lines:
        lines = [f"no incomplete run directories in {inert(outcome.project_root)}"]
    return "\n".join(lines) + "\n"


def status_text(status: RunStatus) -> str:
    """`okstra status`: the run, its lead, its watcher, what can be done, its workers
    and, once the lead ended, the last lines of its window."""
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
    """The lead's lines of `status`: its state (or the run's problem), its session,
    its end and what its look noted."""
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
    """A worker's line of `status`: what it is doing (or its status), its model, what
    it used."""
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
