"""tmux for workers: only the user's own server, only panes okstra started.

Run files are data: a socket path or pane id read from one is used only when

* the socket is the one the user is inside (`$TMUX`), or sits in a directory owned by
  this user that nobody else may enter (tmux's own `tmux-<uid>` directory under
  `$TMUX_TMPDIR` or `/tmp` is made so), and the socket itself is this user's;
* a pane is acted on (killed, selected, read) only while its pid is the process okstra
  recorded at start, with the same start time (or the pane is dead and kept its pid).

tmux itself runs with a minimal environment and an explicit `-S <socket>`, so neither
a `TMUX` variable nor anything else in the caller's environment picks the server.
"""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from ...environment import Environment
from ...launch import TMUX_SOCKET_VAR
from ...records import dataclass
from .proc import Identity, plausible_pid

_TIMEOUT = 10.0
# What tmux needs to run and to draw text; nothing else of the caller's environment.
_KEPT = ("HOME", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "USER", "LOGNAME")
_SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
PANE_FORMAT = "#{pane_id}|#{pane_pid}|#{window_id}|#{session_name}:#{window_index}|#{socket_path}"
_INFO_FORMAT = "#{pane_id}|#{pane_pid}|#{pane_dead}|#{pane_dead_status}|#{pane_dead_signal}"


def socket_dir(environment: Environment) -> Path:
    """tmux's directory of this user's sockets (`$TMUX_TMPDIR/tmux-<uid>`, else /tmp)."""
    return Path(environment.get("TMUX_TMPDIR") or "/tmp") / f"tmux-{os.getuid()}"


def _private_dir(directory: Path) -> bool:
    try:
        st = os.lstat(directory)
    except OSError:
        return False
    return (
        stat.S_ISDIR(st.st_mode)
        and st.st_uid == os.getuid()
        and not st.st_mode & (stat.S_IRWXG | stat.S_IRWXO)
    )


def trusted_socket(path: str | Path, environment: Environment) -> bool:
    """The socket is the user's own: inside a private directory of this user, or the
    server the user is inside now; and (when it exists) a socket this user owns."""
    socket = Path(path)
    if not socket.is_absolute():
        return False
    inside = (environment.get("TMUX") or "").split(",")[0]
    # tmux's own directory that does not exist yet: tmux makes it, private (and refuses
    # one that is not).
    fresh = socket.parent == socket_dir(environment) and not os.path.lexists(socket.parent)
    if not (fresh or _private_dir(socket.parent) or (inside and str(socket) == inside)):
        return False
    try:
        st = os.lstat(socket)
    except FileNotFoundError:
        return True  # not running yet: tmux creates it in the private directory
    except OSError:
        return False
    return stat.S_ISSOCK(st.st_mode) and st.st_uid == os.getuid()


def _utf8(value: str | None) -> bool:
    return value is not None and value.upper().replace("UTF8", "UTF-8").endswith("UTF-8")


def minimal_env(environment: Environment) -> dict[str, str]:
    """What tmux runs with. A UTF-8 locale always: tmux shows a label's `·` as `_`
    without one."""
    env = {key: environment.env[key] for key in _KEPT if key in environment.env}
    env["PATH"] = _SAFE_PATH
    locale = env.get("LC_ALL") or env.get("LC_CTYPE") or env.get("LANG")
    if not _utf8(locale):
        env.pop("LC_ALL", None)
        env["LC_CTYPE"] = "C.UTF-8"
    return env


@dataclass(frozen=True)
class TmuxServer:
    """One tmux server of the user's, by its socket path."""

    tmux: str
    socket: str
    env: Mapping[str, str]

    def argv(self, args: Sequence[str]) -> list[str]:
        return [self.tmux, "-S", self.socket, *args]

    def run(self, args: Sequence[str]) -> subprocess.CompletedProcess[str] | None:
        """Run one tmux command (list); None when tmux could not run or hung."""
        try:
            return subprocess.run(
                self.argv(args),
                env=dict(self.env),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=_TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None

    def answers(self) -> bool:
        """The server runs and answers."""
        done = self.run(["list-sessions", "-F", "#{session_id}"])
        return done is not None and done.returncode == 0


def server_at(socket: str | None, environment: Environment) -> TmuxServer | None:
    """The server at a recorded socket path, if tmux is installed and it is trusted."""
    tmux = environment.which("tmux")
    if not socket or tmux is None or not trusted_socket(socket, environment):
        return None
    return TmuxServer(tmux=tmux, socket=socket, env=minimal_env(environment))


def chosen_socket(environment: Environment) -> str:
    """The socket okstra uses for a new worker window: `OKSTRA_TMUX_SOCKET` (a name in
    tmux's directory, or a path), else the server the user is inside, else the default."""
    named = environment.get(TMUX_SOCKET_VAR)
    if named:
        return named if "/" in named else str(socket_dir(environment) / named)
    inside = (environment.get("TMUX") or "").split(",")[0]
    return inside or str(socket_dir(environment) / "default")


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
        pid = plausible_pid(int(parts[1])) if parts[1].isdigit() else None
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


def _int(text: str) -> int | None:
    return int(text) if text.lstrip("-").isdigit() else None


def pane_state(server: TmuxServer, pane: str, owner: Identity | None) -> PaneState | None:
    """The pane, when it exists and is the one okstra started: its pid is `owner`'s pid
    and (while it runs) `owner` is still that process. None otherwise."""
    if owner is None or not pane.startswith("%") or not pane[1:].isdigit():
        return None
    done = server.run(["display-message", "-p", "-t", pane, _INFO_FORMAT])
    if done is None or done.returncode != 0:
        return None
    parts = done.stdout.strip().split("|")
    if len(parts) != 5 or parts[0] != pane or _int(parts[1]) != owner.pid:
        return None
    dead = parts[2] == "1"
    if not dead and not owner.alive():
        return None
    return PaneState(pane, owner.pid, dead, _int(parts[3]), _int(parts[4]))


def capture(server: TmuxServer, pane: str, lines: int = 40) -> list[str]:
    """The pane's last `lines` lines (trailing blank lines dropped)."""
    done = server.run(["capture-pane", "-p", "-J", "-S", f"-{lines}", "-t", pane])
    if done is None or done.returncode != 0:
        return []
    shown = [line.rstrip() for line in done.stdout.splitlines()]
    shown = [line for line in shown if not line.startswith("Pane is dead")]
    while shown and not shown[-1]:
        shown.pop()
    return shown[-lines:]
