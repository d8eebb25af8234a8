"""`okstra attach` and the app's attach keys: show the lead's tmux window here.

Only the lead's own pane on the user's own tmux server is shown (`tmux`): a run whose
lead is `refused` or `damaged`, or whose pane is no longer the lead's, gets a message
and the command that resumes it. tmux runs with the minimal environment.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence

from ..environment import Environment
from ..processes import tmux
from ..records import config, dataclass
from .hints import next_steps
from .lead import observe, pane_of
from .runinfo import RunInfo, resume_command
from .status import LeadStatus


@dataclass(frozen=True)
class AttachPlan:
    """How to show the lead's window here: a tmux argv to run (or exec), or why not.

    `env` is the environment to run it with (minimal: no secrets reach tmux). Its JSON
    (`records.to_data`): `ok`, the run, the lead's status, the tmux `command`, the
    command that resumes the lead, and the `error` when there is one.
    """

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

    @property
    def run_id(self) -> str:
        return self.run.run_id

    @property
    def run_ref(self) -> str:
        return self.run.ref

    @property
    def resume_command(self) -> str:
        return resume_command(self.run)


def _no_window(run: RunInfo, status: LeadStatus, problem: str) -> AttachPlan:
    return AttachPlan(run=run, status=status, argv=None, switch=False, problem=problem)


def plan_attach(run: RunInfo, environment: Environment) -> AttachPlan:
    """`switch-client` inside tmux (same server), `attach-session` outside; or a message."""
    status = observe(run, environment)
    # How to resume it, when that can work (`life.hints`): said after why not.
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
    server = tmux.server_for(run.lead.tmux_socket, environment)
    pane = pane_of(run.lead)
    probe = tmux.probe_pane(server, pane, environment)
    if probe.refused is not None:
        return _no_window(run, status, f"okstra will not attach: {probe.refused}")
    if probe.found is not True:
        where = status.window_ref or status.pane_ref
        return _no_window(
            run,
            status,
            f"the lead's tmux window {where} is gone ({status.label()}){then}",
        )
    if tmux.inside_socket(environment.env) == server.socket:
        return AttachPlan(
            run=run,
            status=status,
            argv=(*server.base, "switch-client", "-t", pane.ref),
            switch=True,
            env=tmux.minimal_env(environment.env, keep=("TMUX", "TMUX_PANE")),
        )
    return AttachPlan(
        run=run,
        status=status,
        argv=(*server.base, "attach-session", "-t", pane.ref),
        switch=False,
        env=tmux.minimal_env(environment.env),
    )


def switch_client(plan: AttachPlan) -> str | None:
    """Run a `switch=True` plan (inside tmux); the problem, or None when it worked."""
    if plan.argv is None:
        return plan.problem or "cannot attach"
    return run_switch(plan.argv, plan.env or {})


def run_switch(argv: Sequence[str], env: Mapping[str, str]) -> str | None:
    """Run a tmux `switch-client` argv (the lead's plan, or a worker's `AttachTarget`);
    the problem, or None when it worked."""
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
