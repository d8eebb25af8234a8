"""`python -m okstra_core.life.workers.supervise <worker dir>`: run one worker CLI.

`worker start` runs it on the worker's surface. It runs the CLI of `launch.json` with
the prompt on stdin as the leader of its own process group (what `worker stop`
signals); copies its output to `output.log` (stdout also to `stdout.log`; a `[usage]`
CLI's JSON to `events.jsonl`, its text shown) and, in a pane, to the pane; records the
CLI's process; at its end commits a writer's leftovers, writes `exit.json` atomically,
then records the end. SIGINT, SIGTERM and SIGHUP are forwarded to the CLI's group, so
the end is recorded however it comes. Telling the person is the run's watcher's
(`life.watch`).

Where a worker runs (`worker start` chooses, here): tmux, a new pane in a team window of
the workers' own (never the lead's), at most `team.panesPerWindow` (6) panes each; a new
window opens in the lead's session when the lead runs on the same server, else the
caller's session, else a detached session of the run's name. background: its own
session, detached from the caller's terminal and streams. Both return at once with the
supervisor's identity.

A log has a cap: when a write would pass `limit` (`team.logLimitMib`, 10 MiB by default),
it is rewritten atomically from its newest half (cut at a line start) under a marker line
counting the bytes dropped; each byte is copied about twice at most, the end is kept.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import IO, Any, Literal

from ...documents.worker import WorkerExit, WorkerLaunch
from ...environment import Environment
from ...errors import LaunchError, OkstraError, UsageError
from ...launch.plan import tmux_name
from ...processes.process import Identity, process_start
from ...processes.tmux import PANE_FORMAT, PaneRef, TmuxServer, pane_state, server_at, user_server
from ...store import atomic_write_bytes, read_json
from ..worktrees import commit_leftovers, populate
from . import files, record
from .team import Member
from .usage import UsageReader, total_of, usage_text

Surface = Literal["tmux", "background"]
SURFACES = ("tmux", "background")
SUPERVISOR_MODULE = "okstra_core.life.workers.supervise"
_FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_CHUNK = 65536
DEFAULT_LIMIT = 10 * 1024 * 1024
MARKER = "[okstra: {dropped:,} bytes dropped from the start of this log (it keeps {limit})]\n"
# The logs are only appended to, never through a link (their names are fixed: files.py).


def _size_text(limit: int) -> str:
    mib = limit / (1024 * 1024)
    return f"{mib:g} MiB" if mib >= 1 else f"{limit:,} bytes"


class CappedLog:
    """An append-only log of at most `limit` bytes (see the module: a log has a cap)."""

    def __init__(self, path: Path, limit: int = DEFAULT_LIMIT) -> None:
        self.path = path
        self.limit = max(limit, 4096)
        self.fd = self._open()
        self.size = os.fstat(self.fd).st_size
        self.dropped = 0
        self.marker_length = 0  # of the marker line the log starts with (0: none)

    def _open(self) -> int:
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        return os.open(self.path, flags, 0o600)

    def write(self, chunk: bytes) -> None:
        half = self.limit // 2
        if len(chunk) > half:  # a chunk bigger than what is kept: its end alone
            self.dropped += len(chunk) - half
            chunk = chunk[-half:]
        if self.size + len(chunk) > self.limit:
            self._drop_oldest(half - len(chunk))
        os.write(self.fd, chunk)
        self.size += len(chunk)

    def _drop_oldest(self, keep: int) -> None:
        keep = max(0, keep)
        start = max(0, self.size - keep)
        kept = os.pread(self.fd, self.size - start, start) if keep else b""
        if start > 0:
            cut = kept.find(b"\n")
            kept = kept[cut + 1 :] if cut >= 0 else b""
        self.dropped += self.size - len(kept) - self.marker_length
        marker = MARKER.format(dropped=self.dropped, limit=_size_text(self.limit)).encode()
        self.marker_length = len(marker)
        data = marker + kept
        atomic_write_bytes(self.path, data, durable=False)
        os.close(self.fd)
        self.fd = self._open()
        self.size = len(data)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _environment(directory: Path, launch: WorkerLaunch) -> dict[str, str]:
    """The environment of the okstra that started the worker (see `files`)."""
    env = dict(os.environ)
    path = directory / files.ENV
    if launch.surface == "tmux" and os.path.lexists(path):
        try:
            saved = read_json(path, what="worker environment", follow=False)
        finally:
            path.unlink(missing_ok=True)
        if isinstance(saved, dict) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in saved.items()
        ):
            env = dict(saved)
    return env


def _pane() -> tuple[str | None, str | None]:
    """(pane id, socket) of the tmux pane this supervisor runs in, from tmux's own env."""
    pane, socket = os.environ.get("TMUX_PANE"), (os.environ.get("TMUX") or "").split(",")[0]
    return (pane, socket) if pane and socket else (None, None)


def _prepare_pane(pane: str, socket: str, label: str, keep: bool, environment: Environment) -> None:
    """Title the pane; keep it after the supervisor ends only when asked (`keep_pane`)."""
    server = server_at(socket, environment)
    if server is not None:
        remain = ["set-option", "-p", "-t", pane, "remain-on-exit", "on" if keep else "off"]
        server.run([*remain, ";", "select-pane", "-t", pane, "-T", label.replace("#", "##")])


class _Pump:
    """Copies the CLI's two pipes to the logs (and the pane) as the bytes come."""

    def __init__(self, directory: Path, launch: WorkerLaunch, echo: bool) -> None:
        self.lock = threading.Lock()
        self.output = CappedLog(directory / files.OUTPUT, launch.log_limit)
        self.stdout = CappedLog(directory / files.STDOUT, launch.log_limit)
        self.echo = echo
        # A CLI reporting usage writes JSON on stdout: its text is shown, the JSON kept.
        self.reader = UsageReader(launch.usage_format)
        self.events = (
            CappedLog(directory / files.EVENTS, launch.log_limit) if self.reader.active else None
        )

    def _show(self, chunk: bytes, is_stdout: bool) -> None:
        if not chunk:
            return
        self.output.write(chunk)
        if is_stdout:
            self.stdout.write(chunk)
        if self.echo:
            try:
                os.write(1, chunk)
            except OSError:
                self.echo = False  # the pane went away; keep logging

    def copy(self, pipe: IO[bytes], *, is_stdout: bool) -> None:
        fd = pipe.fileno()
        read = is_stdout and self.events is not None
        while chunk := os.read(fd, _CHUNK):
            with self.lock:
                if read and self.events is not None:
                    self.events.write(chunk)
                    chunk = self.reader.feed(chunk)
                self._show(chunk, is_stdout)
        if read:
            with self.lock:
                self._show(self.reader.finish(), is_stdout)

    def start(self, proc: subprocess.Popen[bytes]) -> list[threading.Thread]:
        threads = [
            threading.Thread(target=self.copy, args=(proc.stdout,), kwargs={"is_stdout": True}),
            threading.Thread(target=self.copy, args=(proc.stderr,), kwargs={"is_stdout": False}),
        ]
        for thread in threads:
            thread.start()
        return threads

    def failed(self, message: str) -> str:
        """`message` logged as why the CLI did not run (returned)."""
        self.output.write(f"{message}\n".encode())
        return message.strip()

    def close(self) -> None:
        for log in (self.output, self.stdout, self.events):
            if log is not None:
                log.close()


def _say(text: str, echo: bool) -> None:
    if echo:
        with contextlib.suppress(OSError):
            os.write(1, text.encode("utf-8", "replace"))


def _started(
    launch: WorkerLaunch, cli_pid: int, pane: str | None, socket: str | None
) -> dict[str, Any]:
    """The participant's launch fields (by their names in `Participant`)."""
    me = os.getpid()
    changes: dict[str, Any] = {
        "launch_backend": launch.surface,
        "launched_at": launch.started_at,
        "session_ref": launch.session_id,
        "process_id": cli_pid,
        "process_start": process_start(cli_pid),
        "process_group": cli_pid,
        "parent_process_id": me,
        "parent_start": process_start(me),
    }
    if pane is not None:
        changes.update(pane_ref=pane, tmux_socket=socket)
    else:
        changes["output_log"] = f"{files.WORKERS_DIR}/{launch.role_execution_ref}/{files.OUTPUT}"
    return changes


def _checkout(launch: WorkerLaunch, env: Mapping[str, str], pump: _Pump) -> str | None:
    """Check out a writer's worktree files (made without them); why it could not, or None."""
    if not launch.checkout_pending or launch.worktree is None:
        return None
    try:
        populate(Path(launch.worktree), env)
    except OkstraError as exc:
        return pump.failed(f"could not check out its worktree: {exc.render()}")
    return None


def _spawn(
    launch: WorkerLaunch, directory: Path, env: Mapping[str, str], pump: _Pump
) -> subprocess.Popen[bytes] | str:
    """Start the CLI (its own process group, the prompt on stdin); or why it could not."""
    try:
        with open(directory / files.PROMPT, "rb") as prompt:
            return subprocess.Popen(
                list(launch.argv),
                cwd=launch.cwd,
                env={**env, **launch.env},
                stdin=prompt,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                process_group=0,
            )
    except OSError as exc:
        return pump.failed(f"could not start {launch.argv[0]}: {exc.strerror or exc}")


def supervise(directory: Path) -> int:
    """Run the worker of `directory` to its end; returns the supervisor's exit status."""
    launch = files.read_launch(directory.parent.parent, directory.name)
    run_dir = directory.parent.parent  # where okstra started it, whatever launch.json says
    pane, socket = _pane() if launch.surface == "tmux" else (None, None)
    env = _environment(directory, launch)
    # From here on this process sees the starting okstra's environment too (its
    # OKSTRA_HOME, its caches), whatever the tmux server's was.
    os.environ.clear()
    os.environ.update(env)
    environment = Environment(env=env)
    if pane is not None and socket is not None:
        _prepare_pane(pane, socket, launch.label, launch.keep_pane, environment)
    pump = _Pump(directory, launch, echo=pane is not None)
    _say(f"okstra: {launch.label} — {' '.join(launch.argv[:1])}\n", pump.echo)
    proc = _checkout(launch, env, pump) or _spawn(launch, directory, env, pump)
    if isinstance(proc, str):
        ended = WorkerExit(
            exit_status=127,
            signal=None,
            started_at=launch.started_at,
            exited_at=record.now_text(),
            process_id=None,
            detail=proc,
        )
        _finish(directory, launch, ended, environment)
        return 0

    def forward(signum: int, _frame: FrameType | None) -> None:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signum)

    for signum in _FORWARDED:
        signal.signal(signum, forward)
    threads = pump.start(proc)
    try:
        record.record_started(
            run_dir, launch, _started(launch, proc.pid, pane, socket), now=record.now_text()
        )
    except OkstraError as exc:
        print(f"okstra: could not record the start: {exc.render()}", file=sys.stderr)
    code = proc.wait()
    for thread in threads:
        thread.join()
    pump.close()
    ended = WorkerExit(
        exit_status=code if code >= 0 else None,
        signal=-code if code < 0 else None,
        started_at=launch.started_at,
        exited_at=record.now_text(),
        process_id=proc.pid,
        usage=pump.reader.usage,
        session_id=_session_found(run_dir, launch),
    )
    _finish(directory, launch, ended, environment)
    how = f"signal {ended.signal}" if ended.signal is not None else f"status {ended.exit_status}"
    used = f"; used {usage_text(total_of([ended.usage]))}" if pump.reader.active else ""
    _say(f"\nokstra: {launch.label} ended ({how}{used})\n", pump.echo)
    return 0


def _session_found(run_dir: Path, launch: WorkerLaunch) -> str | None:
    """The session id a CLI that mints its own printed (its provider's pattern)."""
    if launch.session_id is not None or launch.session_pattern is None:
        return launch.session_id
    head = files.head_text(run_dir, launch.role_execution_ref)
    found = re.search(launch.session_pattern, head)
    return found.group(1) if found else None


def _finish(
    directory: Path, launch: WorkerLaunch, ended: WorkerExit, environment: Environment
) -> None:
    """Commit a writer's leftovers, write `exit.json`, record the end (unless recorded).

    The commit comes first: a worker is ended from its `exit.json` on (`worker wait`
    returns, a merge may start), so by then its branch holds all it wrote."""
    run_dir = directory.parent.parent
    if launch.worktree is not None:
        try:
            commit_leftovers(Path(launch.worktree), launch.label, environment.env)
        except OkstraError as exc:
            print(f"okstra: could not commit what it left: {exc.render()}", file=sys.stderr)
    atomic_write_bytes(directory / files.EXIT, ended.to_bytes())
    try:
        session_id = ended.session_id or _session_found(run_dir, launch)
        record.record_end(
            run_dir,
            launch.role_execution_ref,
            dataclasses.replace(ended, session_id=session_id),
            how="exited",
            now=record.now_text(),
            product=files.product_name(run_dir, launch),
        )
    except OkstraError as exc:
        print(f"okstra: could not record the end: {exc.render()}", file=sys.stderr)


def supervisor_argv(directory: Path) -> list[str]:
    """The supervisor's argv: this interpreter, so it runs the same okstra."""
    return [sys.executable, "-m", SUPERVISOR_MODULE, str(directory)]


def choose_surface(
    requested: str | None, leader: Member, environment: Environment
) -> tuple[Surface, TmuxServer | None]:
    """The surface (and server) of a start: as asked, else tmux when the user runs it
    (the lead's server, the one they are inside, their default), else background;
    UsageError for an unknown surface, or `tmux` asked for without tmux installed."""
    if requested not in (None, *SURFACES):
        raise UsageError(
            f"unknown surface {requested!r}; expected one of {', '.join(SURFACES)}",
            field="--surface",
        )
    if requested == "background":
        return "background", None
    lead = leader.participant
    server = server_at(lead.tmux_socket, environment) if lead.launch_backend == "tmux" else None
    if server is not None and server.answers():
        return "tmux", server
    running = user_server(environment, running=True)
    if running is not None:
        return "tmux", running
    if requested == "tmux":
        server = user_server(environment, running=False)
        if server is None:
            raise UsageError(
                "tmux is not installed, or its socket directory is not private to you "
                "(use --surface background)",
                field="--surface",
            )
        return "tmux", server
    return "background", None


def start_background(directory: Path, cwd: Path, env: Mapping[str, str]) -> Identity:
    """Start the supervisor detached (its own session); its stderr goes to a file."""
    log = os.open(directory / "supervisor.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        proc = subprocess.Popen(
            supervisor_argv(directory),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,
        )
    except OSError as exc:
        raise LaunchError(
            f"could not start the worker's supervisor: {exc.strerror or exc}"
        ) from None
    finally:
        os.close(log)
    identity = Identity.now(proc.pid)
    # A supervisor that is already gone (and reaped by nobody) still has a start time
    # until reaped; `Identity.now` of a reaped one is None: record the pid alone then.
    return identity or Identity(proc.pid, "0")


def _tmux_literal(value: str) -> str:
    # tmux ends a command at an argument ending in ";"; `-c` is format-expanded.
    value = value.replace("#", "##")
    return value[:-1] + "\\;" if value.endswith(";") else value


def _team_windows(server: TmuxServer, team: Sequence[Member]) -> dict[str, int]:
    """The run's team windows on `server` (holding okstra's worker panes): pane counts."""
    windows: dict[str, int] = {}
    for member in team:
        if member.leader or member.participant.tmux_socket != server.socket:
            continue
        pane = member.participant.pane_ref
        owner = Identity.of(member.participant.parent_process_id, member.participant.parent_start)
        if not pane or pane_state(server, pane, owner) is None:
            continue
        done = server.run(["display-message", "-p", "-t", pane, "#{window_id} #{window_panes}"])
        fields = done.stdout.split() if done is not None and done.returncode == 0 else []
        if len(fields) == 2 and fields[0].startswith("@") and fields[1].isdigit():
            windows[fields[0]] = int(fields[1])
    return windows


def _lead_session(server: TmuxServer, leader: Member) -> str | None:
    """The session of the lead's pane, when the lead runs in tmux on `server`."""
    if leader.participant.tmux_socket != server.socket:
        return None
    pane = leader.participant.pane_ref
    if not pane or not pane.startswith("%"):
        return None
    done = server.run(["display-message", "-p", "-t", pane, "#{pane_id} #{session_id}"])
    fields = done.stdout.split() if done is not None and done.returncode == 0 else []
    if len(fields) == 2 and fields[0] == pane and fields[1].startswith("$"):
        return fields[1]
    return None


def _window_command(
    server: TmuxServer, name: str, session: str | None, environment: Environment
) -> list[str]:
    if session is not None:
        return ["new-window", "-d", "-t", f"{session}:", "-n", name]
    inside = (environment.get("TMUX") or "").split(",")[0]
    if inside == server.socket:
        return ["new-window", "-d", "-n", name]
    done = server.run(["has-session", "-t", f"={name}"])
    if done is not None and done.returncode == 0:
        return ["new-window", "-d", "-t", f"={name}:", "-n", name]
    return ["new-session", "-d", "-s", name, "-n", name, "-x", "200", "-y", "50"]


def start_tmux(
    server: TmuxServer,
    team: Sequence[Member],
    leader: Member,
    *,
    directory: Path,
    cwd: Path,
    window_name: str,
    environment: Environment,
    per_window: int = 6,
) -> PaneRef:
    """Open the worker's supervisor pane in a team window with room (or a new one), tiled;
    LaunchError when tmux failed (the message has its answer)."""
    roomy = [w for w, panes in _team_windows(server, team).items() if panes < per_window]
    name = tmux_name(f"{window_name}-team")
    command = [_tmux_literal(a) for a in supervisor_argv(directory)]
    tail = ["-P", "-F", PANE_FORMAT, "-c", _tmux_literal(str(cwd)), "--", *command]
    heads = [_window_command(server, name, _lead_session(server, leader), environment)]
    if roomy:
        # A window too small for one more pane: then a window of its own.
        heads.insert(0, ["split-window", "-d", "-t", roomy[0]])
    said = "no answer"
    for head in heads:
        done = server.run([*head, *tail])
        pane = PaneRef.parse(done.stdout) if done is not None and done.returncode == 0 else None
        if pane is not None:
            break
        if done is not None:
            said = done.stderr.strip() or done.stdout.strip()
    else:
        raise LaunchError(f"tmux could not open the worker's pane: {said}")
    tiled = ["select-layout", "-t", pane.window_id, "tiled"]
    server.run([*tiled, ";", "set-option", "-w", "-t", pane.window_id, "pane-border-status", "top"])
    return pane


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m okstra_core.life.workers.supervise <worker dir>", file=sys.stderr)
        return 2
    try:
        return supervise(Path(args[0]))
    except OkstraError as exc:
        print(f"okstra: {exc.render()}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
