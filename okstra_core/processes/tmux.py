"""tmux is reached only through the user's own server, and a pane only when it is the lead's.

A run file (from any repository) names a tmux server and a pane, and a tmux client hands
its whole environment to its server, so before running tmux okstra checks, by `lstat`
only: the socket is in the user's private tmux directory, is `$TMUX`'s, or is the one
named in `OKSTRA_TMUX_SOCKET` (in a directory nobody else may write). A pane is acted on
only while its pid and that process's start time are the ones launch recorded (a dead
pane keeps its pid). tmux runs with a minimal environment (no API key) and a timeout.
"""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from ..display import screen_line
from ..environment import Environment
from ..records import dataclass, field
from . import TMUX_SOCKET_VAR, process

# How long one tmux command may take before okstra stops waiting for it.
TIMEOUT = 2.0
# The variables a tmux client okstra runs gets (plus every LC_*).
MINIMAL_KEYS = ("PATH", "HOME", "TERM", "LANG", "TMUX_TMPDIR")
# A UNIX socket path is at most 107 bytes on Linux.
_SOCKET_MAX = 107
# tmux 3.3a can report a pane dead a moment before it knows the exit status.
_STATUS_GRACE = 2.0
_GONE_MARKERS = ("can't find", "no server running", "error connecting", "no such file")
_PANE_FORMAT = "#{pane_dead}|#{pane_dead_status}|#{pane_dead_signal}|#{pane_dead_time}|#{pane_pid}"


def minimal_env(env: Mapping[str, str], *, keep: Sequence[str] = ()) -> dict[str, str]:
    """The environment a tmux client gets: no secrets, only what tmux needs."""
    return {
        key: value
        for key, value in env.items()
        if key in MINIMAL_KEYS or key.startswith("LC_") or key in keep
    }


def socket_dir(environment: Environment) -> Path:
    """tmux's directory of this user's sockets (`$TMUX_TMPDIR/tmux-<uid>`, else /tmp)."""
    return Path(environment.get("TMUX_TMPDIR") or "/tmp") / f"tmux-{os.getuid()}"


def tmux_dirs(env: Mapping[str, str]) -> set[str]:
    """The user's tmux directory, as written and with its base resolved (tmux resolves it)."""
    base = env.get("TMUX_TMPDIR") or "/tmp"
    name = f"tmux-{os.getuid()}"
    return {os.path.join(base, name), os.path.join(os.path.realpath(base), name)}


def inside_socket(env: Mapping[str, str]) -> str | None:
    """The socket of the tmux this terminal is in (`$TMUX`'s first field)."""
    value = env.get("TMUX") or ""
    first = value.split(",")[0]
    return first or None


def _not_own(path: str, st: os.stat_result, what: str) -> str:
    return (
        f"tmux socket {path} is not the user's own ({what} owner uid {st.st_uid}, "
        f"mode {stat.S_IMODE(st.st_mode):04o}; okstra runs as uid {os.getuid()})"
    )


@dataclass(frozen=True)
class TmuxServer:
    """A tmux server of the user's, by its socket: its argv prefix, whether its socket
    exists, why it is refused; a workers' server runs with its own `env` (`pane_env`)."""

    base: tuple[str, ...]
    socket: str
    running: bool = True
    refused: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)

    def argv(self, args: Sequence[str]) -> list[str]:
        return [*self.base, *args]

    def run(self, args: Sequence[str]) -> subprocess.CompletedProcess[str] | None:
        """Run one tmux command of the workers' panes (`env`, a longer timeout)."""
        return _tmux(self.argv(args), dict(self.env), _WORKER_TIMEOUT)

    def answers(self) -> bool:
        """The server runs and answers."""
        done = self.run(["list-sessions", "-F", "#{session_id}"])
        return done is not None and done.returncode == 0


def _tmux(
    argv: list[str],
    env: dict[str, str],
    timeout: float,
    encoding: str | None = None,
    errors: str | None = None,
) -> subprocess.CompletedProcess[str] | None:
    """Run one tmux command; None when tmux could not run or hung."""
    try:
        return subprocess.run(
            argv,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            encoding=encoding,
            errors=errors,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None


def _shape(socket: object) -> str | None:
    if not isinstance(socket, str) or not socket:
        return "no tmux socket was recorded at launch"
    printable = socket.isprintable() and "\x00" not in socket
    if not printable or not socket.startswith("/") or len(socket.encode()) > _SOCKET_MAX:
        return f"tmux socket {process.shown(socket)} is not a socket path"
    if os.path.normpath(socket) != socket:
        return f"tmux socket {process.shown(socket)} is not a plain path"
    return None


def _check_dir(directory: str, *, private: bool) -> str | None:
    try:
        st = os.lstat(directory)
    except FileNotFoundError:
        return None  # no directory, so no server: nothing will be connected to
    except OSError as exc:
        return f"tmux directory {directory} cannot be read ({exc.strerror})"
    closed = stat.S_IMODE(st.st_mode) & (0o077 if private else 0o022) == 0
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or not closed:
        return _not_own(directory, st, "directory")
    return None


def socket_refusal(socket: object, env: Mapping[str, str]) -> str | None:
    """Why okstra will not connect to `socket` (None: the user's own); `lstat` only."""
    shape = _shape(socket)
    if shape is not None or not isinstance(socket, str):
        return shape
    if socket == inside_socket(env):
        return None
    configured = env.get(TMUX_SOCKET_VAR) or ""
    directory = os.path.dirname(socket)
    if "/" in configured and os.path.normpath(configured) == socket:
        problem = _check_dir(directory, private=False)
    elif directory in tmux_dirs(env):
        problem = _check_dir(directory, private=True)
    else:
        where = " or ".join(sorted(tmux_dirs(env)))
        return (
            f"tmux socket {socket} is not the user's own: it is not in the user's tmux "
            f"directory ({where}) nor the socket of the tmux this terminal is in"
        )
    if problem is not None:
        return problem
    try:
        st = os.lstat(socket)
    except OSError:
        return None
    if not stat.S_ISSOCK(st.st_mode) or st.st_uid != os.getuid():
        return _not_own(socket, st, "socket")
    return None


def trusted_socket(path: str | Path, environment: Environment) -> bool:
    """The socket is the user's own (`socket_refusal` finds nothing against it)."""
    return socket_refusal(str(path), environment.env) is None


def server_for(socket: object, environment: Environment) -> TmuxServer:
    """The server at a recorded socket, checked (see `socket_refusal`)."""
    tmux = environment.which("tmux") or "tmux"
    why = socket_refusal(socket, environment.env)
    if why is not None or not isinstance(socket, str):
        return TmuxServer(base=(), socket=str(socket), running=False, refused=why)
    return TmuxServer(base=(tmux, "-S", socket), socket=socket, running=os.path.exists(socket))


def run(
    server: TmuxServer,
    args: Sequence[str],
    environment: Environment,
    *,
    keep: Sequence[str] = (),
    timeout: float = TIMEOUT,
) -> subprocess.CompletedProcess[str] | None:
    """Run one tmux command on `server`; None if refused, failed or timed out."""
    if server.refused is not None or not server.base:
        return None
    env = minimal_env(environment.env, keep=keep)
    return _tmux(server.argv(args), env, timeout, "utf-8", "replace")


# --------------------------------------------------------------------------- panes


@dataclass(frozen=True)
class Pane:
    """The lead's pane as launch recorded it (values from a run file, checked)."""

    ref: str
    pid: int | None
    start: str | None


@dataclass(frozen=True)
class PaneProbe:
    """One look at a tmux pane (`found` None: cannot tell; `refused`: not the lead's)."""

    found: bool | None
    dead: bool = False
    exit_status: int | None = None
    signal: int | None = None
    dead_at: str | None = None
    pid: int | None = None
    problem: str | None = None
    refused: str | None = None


def _to_int(value: str) -> int | None:
    return int(value) if value.isascii() and value.isdigit() and len(value) <= 10 else None


def _identity(pane: Pane, pid: int | None, dead: bool) -> str | None:
    """Why the pane's program is not the one launch started (None when it is)."""
    if pane.pid is None:
        return f"tmux pane {pane.ref} is not one okstra started: no pane pid was recorded at launch"
    if pid != pane.pid:
        return (
            f"tmux pane {pane.ref} is not the one okstra started: its pid is {pid}, "
            f"launch recorded {pane.pid}"
        )
    if dead:
        return None
    verdict = process.check(process.Identity(pid=pane.pid, start=pane.start))
    if verdict.state == "refused":
        return f"tmux pane {pane.ref}: {verdict.why}"
    return None


def _dead_probe(status: str, sig: str, when: str, pid: int | None) -> PaneProbe:
    at = None
    if _to_int(when) is not None:
        try:
            at = datetime.fromtimestamp(int(when), UTC).isoformat(timespec="seconds")
        except (OverflowError, OSError, ValueError):
            at = None
    return PaneProbe(
        found=True, dead=True, exit_status=_to_int(status), signal=_to_int(sig), dead_at=at, pid=pid
    )


def probe_pane(
    server: TmuxServer,
    pane: Pane,
    environment: Environment,
    *,
    sleep: Callable[[float], None] = time.sleep,
) -> PaneProbe:
    """Whether the pane exists and is the lead's, and — when its program ended — how."""
    if server.refused is not None:
        return PaneProbe(found=None, refused=server.refused)
    if environment.which("tmux") is None:
        return PaneProbe(found=None, problem="tmux is not installed")
    if not server.running:
        return PaneProbe(found=False, problem=f"the tmux server ({server.socket}) is not running")
    deadline = time.monotonic() + _STATUS_GRACE
    polls = 0
    while True:
        done = run(server, ["display-message", "-p", "-t", pane.ref, _PANE_FORMAT], environment)
        if done is None:
            return PaneProbe(found=None, problem="tmux did not answer")
        if done.returncode != 0:
            err = done.stderr.strip()[:300]
            if any(marker in err.lower() for marker in _GONE_MARKERS):
                return PaneProbe(found=False, problem=err)
            return PaneProbe(found=None, problem=err or f"tmux exit {done.returncode}")
        dead, status, sig, when, pid_text = [*done.stdout.strip().split("|"), "", "", "", ""][:5]
        pid = _to_int(pid_text)
        refused = _identity(pane, pid, dead == "1")
        if refused is not None:
            return PaneProbe(found=None, pid=pid, refused=refused)
        if dead != "1":
            return PaneProbe(found=True, pid=pid)
        if status or sig or time.monotonic() >= deadline:
            return _dead_probe(status, sig, when, pid)
        polls += 1
        if polls % 4 == 0:
            # tmux 3.3a can miss the SIGCHLD of a fast-exiting child until it reaps
            # another one: make it fork and reap a child.
            run(server, ["run-shell", "true"], environment)
        sleep(0.05)


def pane_lines(server: TmuxServer, pane: Pane, environment: Environment, count: int) -> list[str]:
    """The last `count` lines of the lead's pane, scrollback included."""
    done = run(server, ["capture-pane", "-p", "-J", "-S", "-500", "-t", pane.ref], environment)
    if done is None or done.returncode != 0:
        return []
    return shown_lines(done.stdout, count)


def shown_lines(text: str, count: int | None = None) -> list[str]:
    """Captured text as lines (the last `count`), without the dead-pane line and trailing
    blanks."""
    lines = [screen_line(line)[:1000] for line in text.splitlines()]
    lines = [line for line in lines if not line.startswith("Pane is dead")]
    while lines and not lines[-1].strip():
        lines.pop()
    return lines if count is None else lines[-count:]


def pane_identity(pane: Pane) -> process.Identity:
    """The pane's program as a process identity (its parent is not recorded)."""
    return process.Identity(pid=pane.pid, start=pane.start)


# --------------------------------------------------------------------------- workers
# The panes of workers (`--surface tmux`), held to the same rules as the lead's.

# Workers' tmux commands make windows and panes: they get longer than a probe's.
_WORKER_TIMEOUT = 10.0
# A worker's tmux server starts the panes' programs: it gets only what tmux needs and a
# plain PATH (the programs are named by absolute path), and a UTF-8 locale always (tmux
# shows a label's `·` as `_` without one).
_PANE_KEPT = ("HOME", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "USER", "LOGNAME")
_SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
PANE_FORMAT = "#{pane_id}|#{pane_pid}|#{window_id}|#{session_name}:#{window_index}|#{socket_path}"
_INFO_FORMAT = "#{pane_id}|#{pane_pid}|#{pane_dead}|#{pane_dead_status}|#{pane_dead_signal}"


def _utf8(value: str | None) -> bool:
    return value is not None and value.upper().replace("UTF8", "UTF-8").endswith("UTF-8")


def pane_env(environment: Environment) -> dict[str, str]:
    """What tmux runs with for a worker's server (see `_PANE_KEPT`)."""
    env = {key: environment.env[key] for key in _PANE_KEPT if key in environment.env}
    env["PATH"] = _SAFE_PATH
    locale = env.get("LC_ALL") or env.get("LC_CTYPE") or env.get("LANG")
    if not _utf8(locale):
        env.pop("LC_ALL", None)
        env["LC_CTYPE"] = "C.UTF-8"
    return env


def server_at(socket: str | None, environment: Environment) -> TmuxServer | None:
    """The server at a recorded socket, if tmux is installed and it is the user's own."""
    tmux = environment.which("tmux")
    if not socket or tmux is None or not trusted_socket(socket, environment):
        return None
    return TmuxServer(base=(tmux, "-S", socket), socket=socket, env=pane_env(environment))


def chosen_socket(environment: Environment) -> str:
    """The socket for a new worker window: `OKSTRA_TMUX_SOCKET`, `$TMUX`, else default."""
    named = environment.get(TMUX_SOCKET_VAR)
    if named:
        return named if "/" in named else str(socket_dir(environment) / named)
    return inside_socket(environment.env) or str(socket_dir(environment) / "default")


def user_server(environment: Environment, *, running: bool) -> TmuxServer | None:
    """The user's tmux server for new panes; with `running`, only one that answers."""
    server = server_at(chosen_socket(environment), environment)
    if server is None or (running and not server.answers()):
        return None
    directory = Path(server.socket).parent
    if not running and directory == socket_dir(environment) and not directory.exists():
        # `tmux -S` does not make tmux's directory as `tmux -L` does: make it private.
        with contextlib.suppress(OSError):
            directory.mkdir(mode=0o700)
            directory.chmod(0o700)
    return server


@dataclass(frozen=True)
class PaneRef:
    """A pane tmux reported when it made it."""

    pane_id: str
    pid: int
    window_id: str
    window_ref: str
    socket: str

    @classmethod
    def parse(cls, text: str) -> PaneRef | None:
        parts = text.strip().split("|", 4)
        if len(parts) != 5 or not parts[0].startswith("%"):
            return None
        pid = process.as_pid(_to_int(parts[1]))
        if pid is None:
            return None
        return cls(parts[0], pid, parts[2], parts[3], parts[4])


@dataclass(frozen=True)
class PaneState:
    """One look at a pane that okstra recorded."""

    pane_id: str
    pid: int
    dead: bool
    exit_status: int | None
    signal: int | None


def pane_state(server: TmuxServer, pane: str, owner: process.Identity | None) -> PaneState | None:
    """The pane, when it exists and its pid is still `owner`'s process; else None."""
    pid = process.as_pid(owner.pid) if owner is not None else None
    if owner is None or pid is None or not pane.startswith("%") or not pane[1:].isdigit():
        return None
    done = server.run(["display-message", "-p", "-t", pane, _INFO_FORMAT])
    if done is None or done.returncode != 0:
        return None
    parts = done.stdout.strip().split("|")
    if len(parts) != 5 or parts[0] != pane or _to_int(parts[1]) != pid:
        return None
    dead = parts[2] == "1"
    if not dead and not owner.alive():
        return None
    return PaneState(pane, pid, dead, _to_int(parts[3]), _to_int(parts[4]))
