"""The short text each MCP tool answers beside its structured result.

An agent reads this first: one line per member or per fact, the next step named.
Every value that comes from a file or a worker's output is made inert (no control
characters, no escape sequences reach the host's screen).
"""

from __future__ import annotations

from collections.abc import Iterable

from ..display import inert
from ..errors import OkstraError
from ..life.actions import (
    Finalized,
    Started,
    Stopped,
    TeamStatus,
    Waited,
    WorkerDiff,
    WorkerDiscard,
    WorkerMerge,
    WorkerResult,
)
from ..life.workers.observe import WorkerState
from ..life.workers.usage import usage_text

# A last line shown in a status row is cut to this many characters.
_LAST = 80


def elapsed(seconds: int | None) -> str:
    if seconds is None:
        return "-"
    minutes, secs = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


def member_line(w: WorkerState) -> str:
    parts = [w.short, w.status, w.model_ref or "-"]
    if w.leader:
        parts.append("(the lead: you)")
    if w.surface:
        parts.append(w.surface)
    if w.started_at:
        parts.append(elapsed(w.elapsed_seconds))
    if w.activity:
        parts.append(w.activity)
    if w.access and not w.leader:
        parts.append(w.access)
    if w.branch:
        parts.append(f"branch {w.branch}")
    if not w.leader and w.state != "prepared":
        parts.append(f"usage {usage_text(w.usage)}")
    line = "  ".join(parts)
    if w.last_line:
        line += f"  | {w.last_line[:_LAST]}"
    return inert(line)


def team(status: TeamStatus) -> str:
    lines = [f"run {inert(status.run_id)}: {len(status.workers)} members"]
    lines += [member_line(w) for w in status.workers]
    return "\n".join(lines)


def started(s: Started) -> str:
    where = f"tmux pane {s.pane_ref}" if s.surface == "tmux" else "background"
    return inert(
        f"started {s.label} ({where}). Wait for it with worker_wait "
        f'{{"who": ["{s.label.split(" ")[0]}"]}}, then read it with worker_result.'
    )


def _shorts(states: Iterable[WorkerState]) -> str:
    return ", ".join(f"{w.short} ({elapsed(w.elapsed_seconds)})" for w in states)


def waited(w: Waited) -> str:
    ended = [s for s in w.workers if s.ended]
    running = [s for s in w.workers if not s.ended]
    lines = [member_line(s) for s in ended]
    if w.timed_out:
        lines.append(
            inert(
                f"still running: {_shorts(running)} — call worker_wait again to keep waiting "
                "(or worker_stop)."
            )
        )
    elif running:
        lines.append(inert(f"still running: {_shorts(running)}"))
    if ended and not w.timed_out:
        lines.append("read each one's output with worker_result.")
    return "\n".join(lines)


def progress(w: Waited, seconds: float) -> str:
    running = [s for s in w.workers if not s.ended]
    return inert(f"waited {seconds:.0f}s; running: {_shorts(running) or 'none'}")


def result(r: WorkerResult) -> str:
    head = f"{r.label} ({r.status}), from its {r.source}"
    if r.truncated:
        head += (
            f"; the first {len(r.data):,} of {r.size:,} bytes (all of it: {r.path}, "
            "or worker_result with full)"
        )
    return inert(head) + ":\n\n" + inert(r.text, keep_newlines=True)


def stopped(s: Stopped) -> str:
    w = s.worker
    if not s.was_running:
        return inert(f"{w.short} is not running ({w.status})")
    steps = ", ".join(s.steps) or "nothing to signal"
    return inert(f"{w.short}: {steps}; now {w.status}")


def finalized(f: Finalized) -> str:
    rows = [f"{r.get('roleExecutionRef')}: {r.get('status')}" for r in f.execution_roles]
    return inert(f"wrote executionRoles onto {f.report}:\n" + "\n".join(rows), keep_newlines=True)


def diff(d: WorkerDiff) -> str:
    head = f"{d.label}: branch {d.branch} against {d.base_commit[:12]} ({d.worktree_path})"
    return inert(head) + "\n\n" + inert(d.text, keep_newlines=True)


def merged(m: WorkerMerge) -> str:
    how = "squashed" if m.squash else "merged"
    lines = [f"{how} {m.branch} into {m.into}: {m.commit[:12]} ({len(m.files)} files)"]
    if m.kept_leftovers:
        lines.append(m.kept_leftovers)
    return inert("\n".join(lines), keep_newlines=True)


def discarded(d: WorkerDiscard) -> str:
    return inert(f"discarded {d.label} (branch {d.branch}): {', '.join(d.steps)}")


def refused(exc: OkstraError) -> str:
    return "okstra: " + inert(exc.render(), keep_newlines=True)
