"""The run's watcher seen from outside: whether it watches, starting one, stopping it.

While a run lives, one watcher (`python -m okstra_core.life.watch <run dir>`, a
process of its own session) looks at the lead and the workers about once a second
and tells the person, once per event, what `config.json`'s `notify` names
(`life.watch`). It is started right after the lead is launched (in tmux, or in the
foreground, and by `okstra resume --exec`) and ends with the team; `okstra stop` ends
it. It records itself in the run's `watcher.json` (its pid and the pid's start time,
what it told) and holds the lock of that file while it runs: a second watcher of the
same run finds the lock taken and leaves at once.

What `okstra runs` and `okstra status` show of it (`watcher_of`): `watching`, `ended`
(it recorded why), `not started`, or `gone` (its record says it watches, and its
process is not there any more).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from ..documents.worker import WatcherRecord
from ..environment import Environment
from ..errors import OkstraError
from ..processes.process import Identity, send
from ..records import config, dataclass

WATCHER = "watcher.json"
WATCHER_LOG = "watcher.log"
WATCH_MODULE = "okstra_core.life.watch"

WATCHING = "watching"
ENDED = "ended"
NOT_STARTED = "not started"
GONE = "gone"

__all__ = [
    "ENDED",
    "GONE",
    "NOT_STARTED",
    "WATCHER",
    "WATCHING",
    "Watcher",
    "read_watcher",
    "start_watcher",
    "stop_watcher",
    "watcher_of",
]


@dataclass(frozen=True, kw_only=True)
class Watcher:
    """The run's watcher as `runs` and `status` show it (their `watcher` object).

    Attributes:
        state: `watching`, `ended`, `not started` or `gone`.
        process_id: its pid, when it started.
        events: what it tells.
        told: what it told, in order.
        looks: how many looks it made.
        ended_at / end_reason: when and why it ended.
    """

    __pydantic_config__ = config(camel_case=True)

    state: str
    process_id: int | None = None
    events: tuple[str, ...] = ()
    told: tuple[str, ...] = ()
    looks: int = 0
    ended_at: str | None = None
    end_reason: str | None = None


def read_watcher(run_dir: Path) -> WatcherRecord | None:
    """The run's `watcher.json`; None when there is none (or it cannot be read)."""
    path = Path(run_dir) / WATCHER
    if not os.path.lexists(path):
        return None
    try:
        return WatcherRecord.read(path)
    except OkstraError:
        return None


def _identity(record: WatcherRecord, run_dir: Path) -> Identity | None:
    """The watcher `record` names, while it runs and is one: the process at its pid has
    its start time and runs the watch module on this run (a planted record naming
    another process of the user's is never signalled, nor shown watching)."""
    identity = Identity.of(record.process_id, record.process_start)
    if identity is None or not identity.alive():
        return None
    try:
        with open(f"/proc/{identity.pid}/cmdline", "rb") as fh:
            argv = fh.read(65536).split(b"\0")
    except OSError:
        return None
    module = WATCH_MODULE.encode()
    at = argv.index(module) + 1 if module in argv else len(argv)
    watching = at < len(argv) and _same_dir(os.fsdecode(argv[at]), run_dir)
    return identity if watching and identity.alive() else None


def _same_dir(a: str, b: Path) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def watcher_of(run_dir: Path) -> Watcher:
    """The run's watcher now: its record, and whether its process still runs."""
    record = read_watcher(run_dir)
    if record is None:
        return Watcher(state=NOT_STARTED)
    if record.ended_at is not None:
        state = ENDED
    else:
        state = WATCHING if _identity(record, run_dir) is not None else GONE
    return Watcher(
        state=state,
        process_id=record.process_id,
        events=record.events,
        told=record.told,
        looks=record.looks,
        ended_at=record.ended_at,
        end_reason=record.end_reason,
    )


def watch_argv(run_dir: Path, tty: str | None = None) -> list[str]:
    """The watcher's argv: this interpreter, so it runs the same okstra."""
    where = os.path.abspath(run_dir)
    return [sys.executable, "-m", WATCH_MODULE, where, *(["--tty", tty] if tty else [])]


def spawn_watcher(
    run_dir: Path, environment: Environment, *, tty: str | None = None
) -> subprocess.Popen[bytes]:
    """Start a watcher of the run, detached (a session of its own), with the environment
    of the command that started the run (its PATH finds `notify-send`); its standard
    error goes to the run's `watcher.log`. Whether it watches is its lock's to say.

    Raises:
        OSError: it could not be started.
    """
    log = os.open(Path(run_dir) / WATCHER_LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        return subprocess.Popen(
            watch_argv(run_dir, tty),
            cwd=run_dir,
            env=dict(environment.env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,
        )
    finally:
        os.close(log)


def start_watcher(run_dir: Path, environment: Environment, *, tty: str | None = None) -> str:
    """Start the run's watcher unless one watches; best effort, never an error.

    Returns:
        `started`, `watching` (one already did: nothing started), or why it could not.
    """
    if watcher_of(run_dir).state == WATCHING:
        return WATCHING
    try:
        spawn_watcher(run_dir, environment, tty=tty)
    except OSError as exc:
        return f"the run's watcher could not start: {exc.strerror or exc}"
    return "started"


def stop_watcher(run_dir: Path) -> Watcher:
    """End the run's watcher (SIGTERM: it records `stopped` and tells nothing more);
    the watcher as it was found."""
    found = watcher_of(run_dir)
    record = read_watcher(run_dir) if found.state == WATCHING else None
    identity = _identity(record, run_dir) if record is not None else None
    if identity is not None:
        send(identity, signal.SIGTERM)
    return found
