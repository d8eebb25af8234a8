"""Where a worker runs: a pane in the run's team window, or a detached process group.

tmux: a new pane in a team window of the workers' own (never the lead's), at most
`team.panesPerWindow` (6) panes each; a new window opens in the lead's session when the
lead runs on the same server, else the caller's session, else a detached session of the
run's name. background: its own session, detached from the caller's terminal and
streams. Both return at once with the supervisor's identity.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from ...environment import Environment
from ...errors import LaunchError, UsageError
from ...launch.commands import tmux_name
from ...processes.process import Identity
from ...processes.tmux import PANE_FORMAT, PaneRef, TmuxServer, pane_state, server_at, user_server
from .team import Member

Surface = Literal["tmux", "background"]
SURFACES = ("tmux", "background")
SUPERVISOR_MODULE = "okstra_core.life.workers.supervise"


def supervisor_argv(directory: Path) -> list[str]:
    """The supervisor's argv: this interpreter, so it runs the same okstra."""
    return [sys.executable, "-m", SUPERVISOR_MODULE, str(directory)]


def _lead_server(leader: Member, environment: Environment) -> TmuxServer | None:
    if leader.participant.launch_backend != "tmux":
        return None
    return server_at(leader.participant.tmux_socket, environment)


def choose_surface(
    requested: str | None, leader: Member, environment: Environment
) -> tuple[Surface, TmuxServer | None]:
    """The surface (and server) of a start: as asked, else tmux when the user runs it
    (the lead's server, the one they are inside, their default), else background.

    Raises:
        UsageError: an unknown surface, or `tmux` asked for without tmux installed.
    """
    if requested not in (None, *SURFACES):
        raise UsageError(
            f"unknown surface {requested!r}; expected one of {', '.join(SURFACES)}",
            field="--surface",
        )
    if requested == "background":
        return "background", None
    lead = _lead_server(leader, environment)
    if lead is not None and lead.answers():
        return "tmux", lead
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
    """Open the worker's supervisor pane in a team window with room (or a new one), tiled.

    Raises:
        LaunchError: tmux failed (the message has its answer).
    """
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
