"""The run's watcher seen from outside: whether it watches, starting one, stopping it.

One per run (`life.watch`), recorded in `watcher.json` whose lock it holds: `watching`,
`ended`, `not started`, or `gone` (its record says it watches; its process is gone)."""

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
from ..records import config, dataclass, fields_of

WATCHER = "watcher.json"
WATCHER_LOG = "watcher.log"
WATCH_MODULE = "okstra_core.life.watch"

WATCHING = "watching"
ENDED = "ended"
NOT_STARTED = "not started"
GONE = "gone"


@dataclass(frozen=True, kw_only=True)
class Watcher:
    """The run's watcher as `runs` and `status` show it; `state` is one of the four above."""

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
    """The watcher `record` names, while its process (pid and start) runs the watch module
    on this run: a planted record naming another process is never signalled."""
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
    if at >= len(argv) or os.path.realpath(os.fsdecode(argv[at])) != os.path.realpath(run_dir):
        return None
    return identity if identity.alive() else None


def watcher_of(run_dir: Path) -> Watcher:
    """The run's watcher now: its record, and whether its process still runs."""
    record = read_watcher(run_dir)
    if record is None:
        return Watcher(state=NOT_STARTED)
    if record.ended_at is not None:
        state = ENDED
    else:
        state = WATCHING if _identity(record, run_dir) is not None else GONE
    kept = fields_of(record, "process_id events told looks ended_at end_reason")
    return Watcher(state=state, **kept)


def spawn_watcher(
    run_dir: Path, environment: Environment, *, tty: str | None = None
) -> subprocess.Popen[bytes]:
    """Start a watcher of the run, detached, in the environment of the command that started
    the run, its stderr to `watcher.log` (raises `OSError`). Its lock says if it watches."""
    log = os.open(Path(run_dir) / WATCHER_LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        return subprocess.Popen(
            # This interpreter, so it runs the same okstra.
            [sys.executable, "-m", WATCH_MODULE, os.path.abspath(run_dir)]
            + (["--tty", tty] if tty else []),
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
    """Start the run's watcher unless one watches: `started`, `watching`, or why not."""
    if watcher_of(run_dir).state == WATCHING:
        return WATCHING
    try:
        spawn_watcher(run_dir, environment, tty=tty)
    except OSError as exc:
        return f"the run's watcher could not start: {exc.strerror or exc}"
    return "started"


def stop_watcher(run_dir: Path) -> Watcher:
    """End the run's watcher (SIGTERM: it records `stopped`); the watcher as found."""
    found = watcher_of(run_dir)
    record = read_watcher(run_dir) if found.state == WATCHING else None
    identity = _identity(record, run_dir) if record is not None else None
    if identity is not None:
        send(identity, signal.SIGTERM)
    return found
