"""Watching a lead just started in tmux: waiting for input, still starting, or gone?

A logged-out lead exits a second after its window opens, so the pane is watched for a
bounded time (`watch_bound`) until its screen waits for input (launched), it dies (its
exit status and last lines), or the bound passes while it runs (launched).
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Sequence

from ..catalog.activity import WAITING, ActivitySpec, classify
from ..display import screen_line
from ..environment import Environment
from ..records import config, dataclass

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
    done = tmux([*base, "capture-pane", "-p", "-J", "-S", "-200", "-t", pane])
    lines = [screen_line(line)[:1000] for line in done.stdout.splitlines()]
    lines = [line for line in lines if not line.startswith("Pane is dead")]
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


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
