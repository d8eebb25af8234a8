"""`python -m okstra_core.life.watch <run dir> [--tty PATH]`: the run's watcher.

It looks at the lead and the workers and tells `notify`'s events (`lead-waiting`,
`worker-ended`, `team-done`) once each: written to `watcher.json` before they are sent,
by tmux, the bell and the desktop (best effort; the text made inert, tmux's `#` doubled)."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

from ..catalog.activity import WAITING
from ..catalog.loaders import load_global_config
from ..catalog.settings import DEFAULT_NOTIFY
from ..display import inert, status_label
from ..documents.worker import WatcherRecord
from ..environment import Environment
from ..errors import OkstraError, StateInUseError
from ..paths import user_dirs
from ..processes import tmux
from ..processes.process import Identity, process_start
from ..processes.tmux import TmuxServer, server_at, user_server
from ..records import fields_of
from ..store import FileLock, atomic_write_bytes
from .activity import lead_screen
from .lead import lead_pane, observe
from .runinfo import ENDED, LAUNCH_FAILED, RunInfo, read_run
from .status import LeadStatus
from .watcher import WATCHER, read_watcher
from .workers import record
from .workers.observe import end_seen_or_looked, read_team
from .workers.team import Member

INTERVAL = 1.0
INTERVAL_VAR = "OKSTRA_WATCH_INTERVAL"
# A lead okstra cannot see for this many looks in a row (its tmux server does not
# answer) is taken as ended: the watcher never outlives its run.
_UNSEEN_LOOKS = 5
_NOTIFY_TIMEOUT = 5.0
# A lead in these states is not running (or is not okstra's to watch): the watcher ends
# once no worker runs either.
_LEAD_OVER = (*ENDED, LAUNCH_FAILED, "prepared", "host-session", "refused", "damaged")


def interval(env: dict[str, str] | os._Environ[str]) -> float:
    """Seconds between looks: `OKSTRA_WATCH_INTERVAL` when it is a number in range."""
    try:
        value = float(env.get(INTERVAL_VAR, ""))
    except ValueError:
        return INTERVAL
    return min(10.0, max(0.05, value)) if value == value else INTERVAL


def notify_events(environment: Environment) -> tuple[tuple[str, ...], str | None]:
    """`config.json`'s `notify` (the defaults, and why, when it cannot be read)."""
    try:
        return load_global_config(user_dirs(environment.env).config_file).notify, None
    except OkstraError as exc:
        return DEFAULT_NOTIFY, f"config.json not read ({exc.render()}): telling the defaults"


def _end_key(member: Member) -> str:
    """One turn of a worker (its start: an end not recorded has no time of its own)."""
    return f"{member.ref}@{member.participant.launched_at or '?'}"


class Watch:
    """One run's watcher: its record, and one look at a time (`look`)."""

    def __init__(self, run_dir: Path, environment: Environment, *, tty: str | None = None) -> None:
        self.run_dir = run_dir
        self.environment = environment
        events, self.note = notify_events(environment)
        before = read_watcher(run_dir)
        me = os.getpid()
        self.record = WatcherRecord(
            process_id=me,
            process_start=process_start(me) or "0",
            started_at=record.now_text(),
            events=events,
            tty=tty,
            **(fields_of(before, "told seen lead_waiting waits") if before is not None else {}),
        )
        self.unseen = 0
        self.stopping = threading.Event()

    def _write(self, **changes: object) -> None:
        self.record = dataclasses.replace(self.record, **changes)  # type: ignore[arg-type]
        # Never making the run directory again: a run removed meanwhile stays removed.
        data = self.record.to_bytes()
        atomic_write_bytes(self.run_dir / WATCHER, data, durable=False, make_parent=False)

    def _log(self, line: str) -> None:
        with contextlib.suppress(OSError):
            print(f"{record.now_text()} {line}", file=sys.stderr, flush=True)

    def _tell(self, event: str, key: str, message: str, run: RunInfo) -> None:
        """Tell `message` once for `key` (recorded first), when `event` is wanted."""
        if event not in self.record.events or key in self.record.told:
            return
        self._write(told=(*self.record.told, key))
        server = _server(run, self.environment)
        fd = _bell_fd(run, server, self.record.tty, self.environment)
        try:
            sent = notify(message, self.environment, server=server, bell_fd=fd)
        finally:
            if fd is not None:
                os.close(fd)
        self._log(f"told {key}: {', '.join(sent) or 'no way to tell was found'}")

    def start(self) -> None:
        """Record this watcher; the ends of workers already over are known, not told."""
        team = read_team(self.run_dir)
        over = tuple(_end_key(m) for m in team if not m.leader and m.status in record.ENDED)
        self._write(seen=tuple(dict.fromkeys((*self.record.seen, *over))))
        if self.note:
            self._log(self.note)

    def look(self) -> bool:
        """One look at the team; True when the team is done (told, if wanted)."""
        run = read_run(self.run_dir)
        # The lead is only looked at: okstra's looks record its end with its pane's lines.
        lead = observe(run, self.environment, record=False)
        running = self._workers(run)
        self._lead_waits(run, lead)
        if not self._lead_over(lead) or running:
            return False
        # One end of the team per lead end (a resumed lead ends again) and batch of workers.
        who = lead.process_id or lead.pane_ref or "-"
        key = f"team-done@{who}:{lead.exited_at or '-'}:{len(self.record.seen)}"
        how = f"its lead {lead.label()}, " if lead.ended else ""
        message = f"okstra: the team of {run.ref} is done ({how}no worker runs)"
        self._tell("team-done", key, message, run)
        return True

    def _lead_over(self, lead: LeadStatus) -> bool:
        if lead.state in _LEAD_OVER:
            return True
        self.unseen = self.unseen + 1 if lead.state in ("unknown", "launched") else 0
        return self.unseen >= _UNSEEN_LOOKS

    def _workers(self, run: RunInfo) -> bool:
        """Tell the ends not seen yet; whether a worker still runs."""
        running = False
        for member in read_team(self.run_dir):
            if member.leader:
                continue
            if member.status == record.RUNNING and not _supervised(member):
                # Its supervisor is gone without recording the end (a live one records
                # its own, with the session and usage): record it here.
                member = end_seen_or_looked(self.run_dir, member, self.environment)
            if member.status == record.RUNNING:
                running = True
                continue
            if member.status not in record.ENDED or _end_key(member) in self.record.seen:
                continue
            key = _end_key(member)
            self._write(seen=(*self.record.seen, key))
            how = status_label(
                member.status, member.participant.exit_status, member.participant.exit_signal
            )
            message = f"okstra: {member.label} {how} ({run.ref})"
            self._tell("worker-ended", f"worker-ended:{key}", message, run)
        return running

    def _lead_waits(self, run: RunInfo, lead: LeadStatus) -> None:
        screen = lead_screen(run, self.environment) if lead.alive else None
        waiting = screen is not None and screen.state == WAITING
        if waiting == self.record.lead_waiting:
            return
        if not waiting:
            self._write(lead_waiting=False)
            return
        waits = self.record.waits + 1
        self._write(lead_waiting=True, waits=waits)
        message = f"okstra: the lead of {run.ref} waits for input"
        self._tell("lead-waiting", f"lead-waiting#{waits}", message, run)

    def run(self, pause: float) -> str:
        """Look every `pause` seconds until the team is done or `stopping`; return why. A team
        done is looked at once more: a lead resumed meanwhile is watched on."""
        self.start()
        reason: str | None = None
        while reason is None and not self.stopping.is_set():
            reason = self._step()
            if reason == "team done" and self._resumed():
                reason = None
            if reason is None:
                self.stopping.wait(pause)
        reason = reason or "stopped"
        with contextlib.suppress(OkstraError, OSError):
            if self.run_dir.is_dir():
                self._write(ended_at=record.now_text(), end_reason=reason)
        self._log(f"ended: {reason}")
        return reason

    def _step(self) -> str | None:
        """One look; why the watcher ends, or None to look again."""
        if not self.run_dir.is_dir():
            return "its run was removed"
        try:
            if self.look():
                return "team done"
            self._write(looks=self.record.looks + 1)
        except OkstraError as exc:
            if not self.run_dir.is_dir():
                return "its run was removed"
            return f"its run could not be read: {exc.render()}"
        return None

    def _resumed(self) -> bool:
        """Record the end, look again: True (the end taken back) when the team runs."""
        try:
            self._write(ended_at=record.now_text(), end_reason="team done")
            if self.look():
                return False
            self._write(ended_at=None, end_reason=None)
        except (OkstraError, OSError):
            return False
        return True


def _clients(server: TmuxServer) -> list[str]:
    done = server.run(["list-clients", "-F", "#{client_name}"])
    if done is None or done.returncode != 0:
        return []
    return [line for line in done.stdout.splitlines() if line]


def notify(
    message: str,
    environment: Environment,
    *,
    server: TmuxServer | None = None,
    bell_fd: int | None = None,
) -> list[str]:
    """Send `message` every way available; returns how it was sent (for tests and logs)."""
    text = inert(message)
    sent: list[str] = []
    if server is not None:
        for client in _clients(server):
            done = server.run(["display-message", "-c", client, text.replace("#", "##")])
            if done is not None and done.returncode == 0:
                sent.append(f"tmux:{client}")
    if bell_fd is not None:
        with contextlib.suppress(OSError):
            if os.isatty(bell_fd):
                os.write(bell_fd, b"\a")
                sent.append("bell")
    program = environment.which("notify-send")
    if program is not None:
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            done_send = subprocess.run(
                [program, "--app-name=okstra", "okstra", text],
                env=dict(environment.env),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=_NOTIFY_TIMEOUT,
                check=False,
            )
            if done_send.returncode == 0:
                sent.append("notify-send")
    return sent


def _supervised(member: Member) -> bool:
    """The worker's supervisor still runs (the process `worker start` recorded)."""
    supervisor = Identity.of(member.participant.parent_process_id, member.participant.parent_start)
    return supervisor is not None and supervisor.alive()


def _server(run: RunInfo, environment: Environment) -> TmuxServer | None:
    """The lead's tmux server, else the user's running one (for the message)."""
    socket = run.lead.tmux_socket
    if run.lead.backend == "tmux" and isinstance(socket, str):
        return server_at(socket, environment)
    return user_server(environment, running=True)


def _bell_fd(
    run: RunInfo, server: TmuxServer | None, tty: str | None, environment: Environment
) -> int | None:
    """The lead's terminal (its recorded pane's, or a foreground lead's), of this user only."""
    path = tty
    if run.lead.backend == "tmux" and server is not None and run.lead.pane_ref:
        lead_server, pane = lead_pane(run.lead, environment)
        probe = tmux.probe_pane(lead_server, pane, environment)
        path = None
        if probe.found is True and not probe.dead and probe.refused is None:
            done = server.run(["display-message", "-p", "-t", pane.ref, "#{pane_tty}"])
            path = done.stdout.strip() if done is not None and done.returncode == 0 else None
    if not path or not path.startswith("/dev/"):
        return None
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError:
        return None
    if not os.isatty(fd) or os.fstat(fd).st_uid != os.getuid():
        os.close(fd)
        return None
    return fd


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    tty = None
    if len(args) == 3 and args[1] == "--tty":
        tty = args.pop(2)
        args.pop(1)
    if len(args) != 1:
        print("usage: python -m okstra_core.life.watch <run dir> [--tty PATH]", file=sys.stderr)
        return 2
    run_dir = Path(args[0])
    # A watcher that is ending may hold it a moment longer (`Watch.run`).
    lock = FileLock(run_dir / WATCHER, timeout=3.0)
    try:
        lock.acquire()
    except StateInUseError:
        return 0  # another watcher watches this run
    except OkstraError as exc:
        print(f"okstra: {exc.render()}", file=sys.stderr)
        return 2
    try:
        watch = Watch(run_dir, Environment(env=dict(os.environ)), tty=tty)

        def stop(_signum: int, _frame: FrameType | None) -> None:
            watch.stopping.set()

        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(signum, stop)
        watch.run(interval(os.environ))
    except OkstraError as exc:
        print(f"okstra: {exc.render()}", file=sys.stderr)
        return 2
    finally:
        lock.release()
    return 0


if __name__ == "__main__":
    sys.exit(main())
