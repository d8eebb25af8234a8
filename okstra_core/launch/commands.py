"""The backend choice and the tmux commands of a launch, as data (`backends` runs them).

tmux gets the CLI's argv after `--` as separate arguments, never a shell string; an
argument ending in `;` is escaped, `-c`'s `#` doubled, a one-element argv prefixed with
`env --` (tmux would run it through `sh -c`). `OKSTRA_TMUX_SOCKET` picks a private server.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from okstra_core.environment import Environment
from okstra_core.errors import OkstraError
from okstra_core.launch.plan import LaunchPlan
from okstra_core.launch.session import discover_env_names
from okstra_core.processes import TMUX_SOCKET_VAR

Backend = Literal["exec", "tmux", "none"]
BACKEND_CHOICES: tuple[str, ...] = ("auto", "exec", "tmux", "none")
# The socket path comes last: it may contain spaces.
_REF_FORMAT = "#{session_name}:#{window_index} #{pane_id} #{socket_path}"
# What the new window runs until the lead CLI replaces it (in the same command list).
_PLACEHOLDER = ("/bin/sh", "-c", "exec sleep 86400")


def choose_backend(requested: str, environment: Environment) -> Backend:
    """Resolve `auto` (tmux inside tmux, else exec); OkstraError for an unknown name."""
    if requested == "auto":
        return "tmux" if environment.get("TMUX") else "exec"
    if requested in ("exec", "tmux", "none"):
        return requested  # type: ignore[return-value]
    raise OkstraError(
        f"unknown launch backend {requested!r}; expected one of {', '.join(BACKEND_CHOICES)}",
        field="--launch",
    )


def tmux_base(environment: Environment) -> list[str]:
    """`tmux`, on the private server named by OKSTRA_TMUX_SOCKET when set."""
    base = [environment.which("tmux") or "tmux"]
    socket = environment.get(TMUX_SOCKET_VAR)
    if socket:
        # A name is a server in tmux's own directory (`-L`); a path is the socket (`-S`).
        base += ["-S", socket] if "/" in socket else ["-L", socket]
    return base


def tmux_name(name: str) -> str:
    """A session/window name tmux takes literally (no `:`/`.` target syntax, no formats)."""
    cleaned = "".join(c if c.isalnum() or c in "-_" else "-" for c in name).strip("-")
    return cleaned[:60] or "okstra"


def _window_env(plan: LaunchPlan, environment: Environment) -> dict[str, str]:
    """The window's variables (it inherits the tmux server's environment, not okstra's):
    okstra's own, the provider's extra env and what discovery's glob reads."""
    env: dict[str, str] = {
        key: value
        for key, value in environment.env.items()
        if key.startswith("OKSTRA_") and key != "OKSTRA_READY_FILE"  # the app's, not the lead's
    }
    if plan.discover is not None:
        for name in discover_env_names(plan.discover):
            value = environment.get(name)
            if value:
                env[name] = value
    env.update(plan.env)
    return env


def tmux_commands(
    plan: LaunchPlan, window_name: str, cwd: Path, environment: Environment
) -> list[list[str]]:
    """The tmux command(s) `start(plan, "tmux", …)` runs to open the window (for dry runs).

    A new window inside tmux, else a detached session (`-2`, `-3`… when taken). It starts
    a placeholder, sets `remain-on-exit`, then respawns the pane with the CLI, in one
    command list: the pane (exit status, last lines) survives even an at-once exit.
    """
    name = tmux_name(window_name)
    env_flags: list[str] = []
    for key, value in _window_env(plan, environment).items():
        env_flags += ["-e", f"{key}={value}"]
    # -c is expanded as a tmux format: "#" starts a format, "##" is a literal "#".
    where = ["-c", str(cwd).replace("#", "##")]
    if environment.get("TMUX"):
        head = ["new-window", "-P", "-F", _REF_FORMAT, "-n", name, *where]
    else:
        head = ["new-session", "-d", "-P", "-F", _REF_FORMAT, "-s", name, "-n", name, *where]
    create = [*head, "--", *_PLACEHOLDER]
    # With a single argument tmux runs it through `sh -c`; two or more are exec'd as is.
    program = ["env", "--", *plan.argv] if len(plan.argv) == 1 else list(plan.argv)
    respawn = ["respawn-pane", "-k", *where, *env_flags, "--", *program]
    chained = [
        *create,
        ";",
        "set-option",
        "-w",
        "remain-on-exit",
        "on",
        ";",
        # tmux ends a command at an argument ending in ";"; "\\;" there is a literal ";".
        *(arg[:-1] + "\\;" if arg.endswith(";") else arg for arg in respawn),
    ]
    return [[*tmux_base(environment), *chained]]
