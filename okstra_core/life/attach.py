"""`okstra attach` and the app's attach keys: show the lead's tmux window here.

Only the lead's own pane on the user's own tmux server is shown; otherwise a message and
the command that resumes it. tmux runs with the minimal environment.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence

from ..environment import Environment
from ..processes import tmux
from ..records import Delegate, config, dataclass
from .lead import lead_pane, observe
from .runinfo import RunInfo, resume_command
from .status import LeadStatus, next_steps


@dataclass(frozen=True)
class AttachPlan:
    """How to show the lead's window here: a tmux argv (run with the minimal `env`), or why
    not."""

    __pydantic_config__ = config(
        camel_case=True,
        aliases={"run_ref": "run", "status": "lead", "argv": "command", "problem": "error"},
        skip=("run", "switch", "env"),
        views=("ok", "run_id", "run_ref", "resume_command"),
        first=("ok", "run_id", "run_ref", "status", "argv", "resume_command", "problem"),
        omit_none=("problem",),
    )

    run: RunInfo
    status: LeadStatus
    argv: tuple[str, ...] | None
    switch: bool  # inside tmux on the same server: switch-client (returns at once)
    env: Mapping[str, str] | None = None
    problem: str | None = None

    @property
    def ok(self) -> bool:
        return self.problem is None

    run_id = Delegate[str]("run.run_id")
    run_ref = Delegate[str]("run.ref")

    @property
    def resume_command(self) -> str:
        return resume_command(self.run)


def _no_window(run: RunInfo, status: LeadStatus, problem: str) -> AttachPlan:
    return AttachPlan(run=run, status=status, argv=None, switch=False, problem=problem)


def plan_attach(run: RunInfo, environment: Environment) -> AttachPlan:
    """`switch-client` inside tmux (same server), `attach-session` outside; or a message."""
    status = observe(run, environment)
    # How to resume it, when that can work (`life.status`): said after why not.
    resume = next((s for s in next_steps(run, status) if s.startswith("okstra resume")), None)
    then = f"; to resume it: {resume}" if resume else ""
    if status.state in ("refused", "damaged"):
        return _no_window(run, status, f"okstra will not attach: {status.detail}{then}")
    if status.backend != "tmux" or not status.pane_ref:
        why = {
            "prepared": "its lead was never launched",
            "host-session": "its lead is the host session it was prepared in",
        }.get(status.state, f"its lead was launched in the foreground ({status.backend})")
        return _no_window(run, status, f"there is no tmux window to attach to: {why}{then}")
    server, pane = lead_pane(run.lead, environment)
    probe = tmux.probe_pane(server, pane, environment)
    if probe.refused is not None:
        return _no_window(run, status, f"okstra will not attach: {probe.refused}")
    if probe.found is not True:
        where = status.window_ref or status.pane_ref
        return _no_window(
            run, status, f"the lead's tmux window {where} is gone ({status.label()}){then}"
        )
    switch = tmux.inside_socket(environment.env) == server.socket
    return AttachPlan(
        run=run,
        status=status,
        argv=(*server.base, "switch-client" if switch else "attach-session", "-t", pane.ref),
        switch=switch,
        env=tmux.minimal_env(environment.env, keep=("TMUX", "TMUX_PANE") if switch else ()),
    )


def switch_client(plan: AttachPlan) -> str | None:
    """Run a `switch=True` plan (inside tmux); the problem, or None when it worked."""
    if plan.argv is None:
        return plan.problem or "cannot attach"
    return run_switch(plan.argv, plan.env or {})


def run_switch(argv: Sequence[str], env: Mapping[str, str]) -> str | None:
    """Run a tmux `switch-client` argv (a lead's plan or a worker's); the problem, or None."""
    try:
        done = subprocess.run(
            list(argv),
            env=dict(env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            encoding="utf-8",
            errors="replace",
            timeout=tmux.TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return "tmux: did not answer"
    except OSError as exc:
        return f"tmux: {exc.strerror or exc}"
    return f"tmux: {done.stderr.strip()[:300]}" if done.returncode else None
