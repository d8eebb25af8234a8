"""The lead run in the foreground (okstra its parent): its start and end recorded, watched as
a tmux launch is (`prepare --launch exec`, `resume --exec`, the app's hand-over)."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..documents.task import LeadLaunchFailed, LeadResumed
from ..environment import Environment
from ..errors import OkstraError
from ..launch.backends import early_exit_line, watch_bound
from ..processes import process
from ..store import append_line
from .lead import failure_text, record_end, update_leader
from .resume import resume_run
from .runinfo import LEADER_REF, RunInfo, read_run, resume_command
from .watcher import WATCHING, start_watcher
from .workers.record import timeline_path

# What a resumed lead no longer has: its earlier end and where it ran (`Participant` names).
_RESUMED_CLEARS = (
    *("exit_status", "exit_signal", "exited_at", "end_detail", "stop_requested_at"),
    *("pane_ref", "window_ref", "tmux_socket", "pane_process_id", "pane_start"),
)


def _terminal() -> str | None:
    """The terminal the foreground lead runs in (the watcher rings its bell there)."""
    for fd in (0, 1, 2):
        with contextlib.suppress(OSError):
            if os.isatty(fd):
                return os.ttyname(fd)
    return None


def _launch_record(pid: int) -> dict[str, Any]:
    """The foreground lead as launch records it: its pid and start time, and okstra's."""
    me = process.recorded(pid, with_parent=True)
    return {
        "process_id": pid,
        "process_start": me.start,
        "parent_process_id": me.parent,
        "parent_start": me.parent_start,
    }


def _record_start(run: RunInfo, pid: int, environment: Environment, *, resumed: bool) -> str | None:
    """Record the started lead (and a resume); why not, on a project okstra cannot write."""
    changes = _launch_record(pid)
    try:
        if not resumed:
            update_leader(run.run_dir, changes)
            return None
        now = environment.now().isoformat(timespec="seconds")
        changes.update(dict.fromkeys(_RESUMED_CLEARS))
        changes.update(status="launched", launch_backend="exec", launched_at=now)
        update_leader(run.run_dir, changes)
        resumed_event = LeadResumed(
            at=now, run_id=run.run_id, participant_ref=LEADER_REF, backend="exec", process_id=pid
        )
        append_line(timeline_path(run.run_dir), resumed_event.dump())
    except (OkstraError, OSError) as exc:
        return f"okstra: the lead's start was not recorded: {failure_text(exc)}"
    return None


def _started(
    run: RunInfo, pid: int, environment: Environment, *, resumed: bool, terminal: bool
) -> list[str]:
    """Record the started lead and start the run's watcher; what could not be done."""
    note = _record_start(run, pid, environment, resumed=resumed)
    if note is not None:
        return [note]
    started = start_watcher(run.run_dir, environment, tty=_terminal() if terminal else None)
    return [] if started in ("started", WATCHING) else [f"okstra: {started}"]


def _record_launch_failure(run: RunInfo, environment: Environment, exc: OkstraError) -> None:
    """A `lead-launch-failed` event in the timeline, when it can be written."""
    with contextlib.suppress(OkstraError, OSError):
        failed = LeadLaunchFailed(
            at=environment.now().isoformat(timespec="seconds"),
            run_id=run.run_id,
            backend="exec",
            error=exc.render(),
        )
        append_line(timeline_path(run.run_dir), failed.dump())


def run_foreground(
    run_dir: Path,
    argv: Sequence[str],
    env: Mapping[str, str],
    cwd: Path,
    environment: Environment,
    *,
    say: Callable[[str], None],
    resumed: bool = False,
    output: Path | None = None,
) -> tuple[int, str | None]:
    """Run the lead CLI of an `exec` launch as okstra's foreground child; record its end.

    `output`: a file for its output instead of the terminal; `resumed`: an earlier lead
    runs again. Returns its exit status (128 + N for signal N) and `early_exit_line`."""
    run = read_run(run_dir)
    verb = "resumes" if resumed else "starts"
    say(f"okstra: run {run.ref} — the lead ({Path(argv[0]).name}) {verb} here.")
    say(f"okstra: to resume it later: {resume_command(run)}")
    started = time.monotonic()
    notes: list[str] = []

    def on_start(pid: int) -> None:
        notes.extend(_started(run, pid, environment, resumed=resumed, terminal=output is None))

    from ..launch.foreground import run_child  # only a foreground lead needs it

    try:
        ended = run_child(
            argv, environment.okstra_first_env(env), cwd, on_start=on_start, output=output
        )
    except OkstraError as exc:
        _record_launch_failure(run, environment, exc)
        raise
    try:
        record_end(
            run_dir,
            environment=environment,
            exit_status=ended.exit_status,
            signal_number=ended.signal,
        )
    except (OkstraError, OSError) as exc:
        notes.append(f"okstra: the lead's end was not recorded: {failure_text(exc)}")
    with contextlib.suppress(OkstraError, OSError):
        resume_run(run_dir, environment=environment, wait=0)
    for note in notes:
        say(note)
    elapsed = time.monotonic() - started
    how = (
        f"was killed by signal {ended.signal}"
        if ended.signal is not None
        else f"exited with status {ended.exit_status}"
    )
    say(f"okstra: the lead of {run.ref} {how} after {int(elapsed)}s; resume: {resume_command(run)}")
    return ended.code, early_exit_line(ended.code, elapsed, str(run_dir), watch_bound(environment))
