"""Launch backends: `exec` (replace the process), `tmux` (a window), `none` (print only).

Runs the commands `plan` builds. The pane id, server socket, and pid and start time
of the lead in it are recorded, so okstra finds the pane again from any terminal and
knows it for the lead's. Only the command that opens the window carries okstra's
environment (the lead's, API keys included); every other tmux command runs with the
minimal one (`processes.tmux`), on the server the window was opened on.

A lead started in tmux is watched for a bounded time (`watch_bound`: a logged-out lead
exits a second after its window opens) until its screen waits for input (launched), it
dies (its exit status and last lines), or the bound passes while it runs (launched).
"""

from __future__ import annotations

import functools
import os
import shlex
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any, NoReturn

from okstra_core.environment import Environment
from okstra_core.errors import LaunchError, OkstraError
from okstra_core.launch.plan import Backend, LaunchPlan, tmux_base, tmux_commands, tmux_name
from okstra_core.launch.session import discover_session
from okstra_core.processes.process import process_start
from okstra_core.processes.tmux import minimal_env, shown_lines

from ..catalog.activity import WAITING, ActivitySpec, classify
from ..records import config, dataclass

_TMUX_TIMEOUT = 10.0
WATCH_ENV = "OKSTRA_LAUNCH_WATCH"
DEFAULT_WATCH = 5.0
MAX_WATCH = 120.0
LAST_LINES = 20
_POLL = 0.05
# tmux sees the pty close before it reaps the child: a dead pane's exit status can lag.
_STATUS_GRACE = 2.0

Tmux = Callable[[Sequence[str]], "subprocess.CompletedProcess[str]"]


def watch_bound(environment: Environment) -> float:
    """How long a new lead is watched: `OKSTRA_LAUNCH_WATCH` seconds (0–120), else the
    default (a value that is not such a number is ignored)."""
    raw = (environment.get(WATCH_ENV) or "").strip()
    try:
        value = float(raw)
    except ValueError:
        return DEFAULT_WATCH
    return value if 0 <= value <= MAX_WATCH else DEFAULT_WATCH


@dataclass(frozen=True)
class LeadExit:
    """A lead that exited while okstra watched its start."""

    __pydantic_config__ = config(camel_case=True, views=("headline",))

    exit_status: int | None
    signal: int | None
    after_seconds: float
    last_lines: tuple[str, ...] = ()

    def headline(self) -> str:
        """`the lead exited 1 after 1.6 s` (or was killed by a signal)."""
        after = f"after {self.after_seconds:.1f} s"
        if self.signal:
            return f"the lead was killed by signal {self.signal} {after}"
        status = "" if self.exit_status is None else f" {self.exit_status}"
        return f"the lead exited{status} {after}"


@dataclass(frozen=True)
class Watched:
    """What watching the start saw: `waiting for input`, `running` or `exited`."""

    state: str
    seconds: float
    lead_exit: LeadExit | None = None


def _int(text: str) -> int | None:
    return int(text) if text.isdigit() and len(text) < 10 else None


def _lines(tmux: Tmux, base: Sequence[str], pane: str) -> list[str]:
    return shown_lines(tmux([*base, "capture-pane", "-p", "-J", "-S", "-200", "-t", pane]).stdout)


def _waiting(tmux: Tmux, base: Sequence[str], pane: str, activity: ActivitySpec | None) -> bool:
    """The screen shows the provider's `waiting` patterns (and no `running` one)."""
    if activity is None or not activity.waiting:
        return False
    return classify(_lines(tmux, base, pane), activity) == WAITING


def watch_pane(
    tmux: Tmux,
    base: Sequence[str],
    pane: str,
    *,
    activity: ActivitySpec | None,
    bound: float,
    started: float,
) -> Watched:
    """Watch `pane` until it waits for input, dies, or `bound` seconds after `started`
    (monotonic) pass; LookupError when the pane is gone."""
    deadline = started + bound
    dead_polls = 0
    fields = "#{pane_dead}:#{pane_dead_status}:#{pane_dead_signal}"
    while True:
        probe = tmux([*base, "display-message", "-p", "-t", pane, fields])
        if probe.returncode != 0:
            raise LookupError(pane)
        dead, status, signal = [*probe.stdout.strip().split(":"), "", ""][:3]
        now = time.monotonic()
        if dead == "1":
            if status or signal or now >= max(deadline, started) + _STATUS_GRACE:
                lead_exit = LeadExit(
                    exit_status=_int(status),
                    signal=_int(signal) or None,
                    after_seconds=round(now - started, 1),
                    last_lines=tuple(_lines(tmux, base, pane)[-LAST_LINES:]),
                )
                return Watched("exited", now - started, lead_exit)
            dead_polls += 1
            if dead_polls % 4 == 0:
                # tmux 3.3a can leave a fast-exiting child a zombie until it reaps another.
                tmux([*base, "run-shell", "true"])
        elif _waiting(tmux, base, pane, activity):
            return Watched(WAITING, now - started)
        if dead != "1" and now >= deadline:
            return Watched("running", now - started)
        time.sleep(_POLL)


def early_exit_line(code: int, seconds: float, run: str, bound: float) -> str | None:
    """A line about a foreground lead that ended within `bound` seconds, else None."""
    if seconds > bound:
        return None
    lead_exit = LeadExit(exit_status=code, signal=None, after_seconds=round(seconds, 1))
    return (
        f"okstra: {lead_exit.headline()}; check its CLI with `okstra doctor` (installed? "
        f"logged in?), then resume it with `okstra resume {run} --exec`"
    )


@dataclass(frozen=True, kw_only=True)
class LaunchResult:
    """What `start` did; a failure is in `error` (never raised), with what was done before.

    `pane_pid`/`pane_start`: the lead CLI's pid and start time in its tmux pane.
    """

    # Its protocol data: the exec environment is not written; the error as its text.
    __pydantic_config__ = config(
        camel_case=True,
        aliases={"error_text": "error", "pane_pid": "paneProcessId"},
        skip=("exec_env", "error"),
        views=("error_text",),
        omit_none=("error_text", "watched", "watched_seconds", "lead_exit"),
        omit_empty=("notes",),
    )

    backend: Backend
    session_id: str | None
    window_ref: str | None = None
    pane_ref: str | None = None
    tmux_socket: str | None = None
    pane_pid: int | None = None
    pane_start: str | None = None
    pending_discovery: bool
    exec_argv: tuple[str, ...] | None = None
    exec_env: Mapping[str, str] | None = None
    cwd: Path
    launched_at: datetime
    error: LaunchError | None = None
    command: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    # What watching the start saw (tmux), after how many seconds, and how it exited.
    watched: str | None = None
    watched_seconds: float | None = None
    lead_exit: LeadExit | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def error_text(self) -> str | None:
        """The error as a person reads it, or None."""
        return self.error.render() if self.error is not None else None

    def where(self) -> dict[str, Any]:
        """The leader participant's fields (`Participant` names) of where it runs (tmux)."""
        if self.pane_ref is None:
            return {}
        return {
            "pane_ref": self.pane_ref,
            "tmux_socket": self.tmux_socket,
            "pane_process_id": self.pane_pid,
            "pane_start": self.pane_start,
        }

    def raise_for_error(self) -> LaunchResult:
        """Raise the launch error, if any; else return self."""
        if self.error is not None:
            raise self.error
        return self


def _run(
    cmd: Sequence[str], environment: Environment, *, lead_env: bool = False
) -> subprocess.CompletedProcess[str]:
    """Run a tmux command with the minimal environment, or the lead's (`lead_env`)."""
    try:
        return subprocess.run(
            list(cmd),
            env=dict(environment.env) if lead_env else minimal_env(environment.env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=_TMUX_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise LaunchError(f"`{shlex.join(cmd)}` did not finish within {_TMUX_TIMEOUT:g} s") from exc
    except OSError as exc:
        raise LaunchError(f"`{shlex.join(cmd)}` could not run: {exc.strerror or exc}") from exc


def _free_session_name(name: str, environment: Environment) -> str:
    base = tmux_base(environment)
    for n in range(1, 100):
        candidate = name if n == 1 else f"{name}-{n}"
        probe = _run([*base, "has-session", "-t", f"={candidate}"], environment)
        if probe.returncode != 0:
            return candidate
    raise LaunchError(f"tmux sessions {name} … {name}-99 all exist; close some and retry")


def _start_tmux(
    plan: LaunchPlan,
    window_name: str,
    cwd: Path,
    environment: Environment,
    settle: float,
    activity: ActivitySpec | None,
    common: dict[str, Any],
) -> LaunchResult:
    """Open the lead's window and watch its start."""
    if environment.which("tmux") is None:
        raise LaunchError("tmux is not installed (needed by the tmux launch backend)")
    (cmd,) = tmux_commands(plan, window_name, cwd, environment)
    if not environment.get("TMUX"):
        name = tmux_name(window_name)
        free = _free_session_name(name, environment)
        if free != name:
            at = cmd.index("-s") + 1
            cmd[at] = free
    opened = time.monotonic()
    done = _run(cmd, environment, lead_env=True)
    if done.returncode != 0:
        raise LaunchError(
            f"`{shlex.join(cmd)}` failed (exit {done.returncode}): {done.stderr.strip()}"
        )
    ref, pane, socket = [*done.stdout.strip("\n").split(" ", 2), "", ""][:3]
    if not pane:
        said = done.stderr.strip() or "it printed no window"
        raise LaunchError(f"`{shlex.join(cmd)}` opened no tmux window: {said}")
    # From here on: the server the window was opened on, whatever TMUX says.
    base = [cmd[0], "-S", socket] if socket else tmux_base(environment)
    # Recorded while the lead runs: its pid and start time tell it from any later program.
    done = _run([*base, "display-message", "-p", "-t", pane, "#{pane_pid}"], environment)
    text = done.stdout.strip()
    pid = int(text) if done.returncode == 0 and text.isdigit() and len(text) <= 10 else None
    started = process_start(pid)
    try:
        tmux = functools.partial(_run, environment=environment)
        watched = watch_pane(tmux, base, pane, activity=activity, bound=settle, started=opened)
    except LookupError:
        raise LaunchError(
            f"`{shlex.join(plan.argv)}` exited at once: its tmux window {ref} is gone"
        ) from None
    return LaunchResult(
        window_ref=ref,
        command=tuple(cmd),
        pane_ref=pane,
        tmux_socket=socket,
        pane_pid=pid,
        pane_start=started,
        watched=watched.state,
        watched_seconds=round(watched.seconds, 1),
        lead_exit=watched.lead_exit,
        **common,
    )


def _discover(
    plan: LaunchPlan,
    cwd: Path,
    launched_at: datetime,
    environment: Environment,
    timeout: float | None,
) -> tuple[str | None, tuple[str, ...]]:
    """The session id a `discover` provider's CLI recorded, and notes when it did not."""
    if plan.discover is None:
        return plan.session_id, ()
    try:
        found = discover_session(
            plan.discover, cwd, launched_at, environment, timeout=timeout, source=plan.source
        )
    except OkstraError as exc:
        return plan.session_id, (f"session discovery failed: {exc.render()}",)
    if found is None:
        return None, (
            "the CLI has not recorded its session yet: the resume sheet says pending discovery",
        )
    return found, ()


def start(
    plan: LaunchPlan,
    backend: Backend,
    window_name: str,
    cwd: Path,
    environment: Environment,
    *,
    discover: bool = True,
    discover_timeout: float | None = None,
    settle: float | None = None,
    activity: ActivitySpec | None = None,
) -> LaunchResult:
    """Start the lead CLI with `backend`; a failure comes back in `.error`, naming the command.

    exec: returns what to exec, runs nothing. tmux: opens the window and watches the
    start (`watch_pane`, at most `settle` seconds, default `watch_bound`), then, with
    `discover`, waits for a `discover` provider's session id. none: nothing.
    """
    launched_at = environment.now()
    pending = plan.session_id_kind == "discover"
    common: dict[str, Any] = {
        "backend": backend,
        "session_id": plan.session_id,
        "pending_discovery": pending,
        "cwd": cwd,
        "launched_at": launched_at,
    }
    if backend == "none":
        return LaunchResult(**common)
    if backend == "exec":
        return LaunchResult(
            exec_argv=plan.argv,
            exec_env={**environment.okstra_first_env(), **plan.env},
            command=plan.argv,
            **common,
        )
    bound = watch_bound(environment) if settle is None else settle
    try:
        # The lead runs with okstra's own command directory first on its PATH.
        lead = replace(environment, env=environment.okstra_first_env())
        result = _start_tmux(plan, window_name, cwd, lead, bound, activity, common)
    except LaunchError as exc:
        return LaunchResult(error=exc, **common)
    if not (pending and discover and result.lead_exit is None):
        return result
    session_id, notes = _discover(plan, cwd, launched_at, environment, discover_timeout)
    return replace(result, session_id=session_id, pending_discovery=session_id is None, notes=notes)


def exec_now(result: LaunchResult) -> NoReturn:
    """Replace this process with the CLI of an `exec` launch (else LaunchError)."""
    if result.exec_argv is None or result.exec_env is None:
        raise LaunchError(f"nothing to exec: the launch used the {result.backend} backend")
    argv = list(result.exec_argv)
    try:
        os.chdir(result.cwd)
        os.execve(argv[0], argv, dict(result.exec_env))
    except OSError as exc:
        raise LaunchError(f"`{shlex.join(argv)}` could not start: {exc.strerror or exc}") from exc
