"""What the app does with a run picked from a list (start screen, runs screen).

Reading the runs and stopping can take seconds: the screens call them from worker
threads. Attaching outside tmux and resuming hand the terminal over: they return a
`LaunchRequest` the app exits with.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import ParamSpec

from textual.app import App

from okstra_core.display import age as shown_age
from okstra_core.environment import Environment
from okstra_core.errors import OkstraError
from okstra_core.life.actions import team_stop, worker_attach, worker_send, worker_stop
from okstra_core.life.attach import plan_attach, run_switch, switch_client
from okstra_core.life.lead import observe, read_run
from okstra_core.life.resume import exec_command, resume_run
from okstra_core.life.runs import RunRow, all_runs, project_runs
from okstra_core.records import dataclass
from okstra_core.wizard.text import WizardText

from .messages import LaunchRequest

P = ParamSpec("P")


@dataclass(frozen=True)
class Outcome:
    """What an action on a run did: a line to show, or the terminal to hand over."""

    message: str = ""
    request: LaunchRequest | None = None


def _refusal_said(action: Callable[P, Outcome]) -> Callable[P, Outcome]:
    """`action`, whose refusal (an OkstraError) is its outcome's message."""

    @functools.wraps(action)
    def run(*args: P.args, **kwargs: P.kwargs) -> Outcome:
        try:
            return action(*args, **kwargs)
        except OkstraError as exc:
            return Outcome(exc.render())

    return run


def act(app: App[LaunchRequest | None], outcome: Outcome, say: Callable[[str], None]) -> None:
    """Carry out an action's outcome on a screen: hand the terminal over, or say it."""
    if outcome.request is not None:
        app.exit(outcome.request)
    else:
        say(outcome.message)


def read_runs(
    project_root: Path | None, show_all: bool, environment: Environment
) -> tuple[list[RunRow], str]:
    """The runs (newest first, their age measured now), or an error to show.

    A damaged run is a row with its `problem`. Without a project there are no runs of
    this project: other projects' show only with `show_all`.
    """
    now = environment.now()
    try:
        if show_all:
            rows = all_runs(environment)
        elif project_root is None:
            rows = []
        else:
            rows = project_runs(project_root, environment)
    except OkstraError as exc:
        return [], exc.render()
    return [row.at(now) for row in rows], ""


def age(row: RunRow) -> str:
    return shown_age(row.age_seconds)


def lead_label(row: RunRow, text: WizardText) -> str:
    """The lead column: `running`, `exited 1`, `pending id`, … `damaged` or `incomplete`."""
    if row.state == "incomplete":
        return text.get("app.runs.incomplete")
    if row.problem and row.lead is None:
        return text.get("app.runs.damaged")
    return row.lead_status()


def status_lines(row: RunRow, text: WizardText) -> list[str]:
    """The highlighted run: its lead, the actions that can work for it, and why it is odd."""
    lines = [text.get("app.runs.detail", run=row.run_ref, status=lead_label(row, text))]
    lines += [text.get("app.runs.next", command=step) for step in row.next_steps]
    why = (row.lead.detail if row.lead is not None else None) or row.problem
    if why:
        lines.append(why)
    return lines


@_refusal_said
def attach(run_dir: Path, environment: Environment) -> Outcome:
    """Show the lead's tmux window: switch to it inside tmux, else hand the terminal over."""
    run = read_run(run_dir)
    plan = plan_attach(run, environment)
    if plan.argv is None:
        return Outcome(plan.problem or "")
    if plan.switch:
        return Outcome(switch_client(plan) or "")
    return Outcome(request=LaunchRequest(tuple(plan.argv), run.run_dir, plan.env))


@_refusal_said
def attach_worker(run_dir: Path, who: str, environment: Environment) -> Outcome:
    """Show a worker's tmux pane (a background worker or a gone pane gets the reason)."""
    target = worker_attach(run_dir, environment, who)
    if target.switch:
        return Outcome(run_switch(target.argv, target.env) or "")
    return Outcome(request=LaunchRequest(tuple(target.argv), run_dir, target.env))


@_refusal_said
def stop_worker(run_dir: Path, who: str, environment: Environment, text: WizardText) -> Outcome:
    """Stop one worker (SIGTERM, SIGKILL after the grace time: blocks)."""
    stopped = worker_stop(run_dir, environment, who)
    return Outcome(text.get("app.team.stopped", who=who, status=stopped.worker.status))


@_refusal_said
def stop_lead_only(run_dir: Path, environment: Environment, text: WizardText) -> Outcome:
    """Stop the lead alone (`okstra stop --lead-only`): its workers keep running."""
    outcome = team_stop(run_dir, environment, lead_only=True)
    lead = outcome.lead.after
    message = text.get("app.team.lead_stopped", status=lead.label())
    return Outcome(f"{message}: {lead.detail}" if lead.detail and not outcome.ok else message)


@_refusal_said
def send_worker(
    run_dir: Path, who: str, prompt: str, environment: Environment, text: WizardText
) -> Outcome:
    """Send an ended worker a follow-up (`worker_send`)."""
    started = worker_send(run_dir, environment, who, prompt=prompt)
    return Outcome(text.get("app.team.sent", who=started.label.split(" ")[0]))


@_refusal_said
def stop_lead(run_dir: Path, environment: Environment, text: WizardText) -> Outcome:
    """Stop the team as `okstra stop` does (blocks up to the grace time); a lead okstra did
    not start or a damaged run is never signalled, and the message says why."""
    outcome = team_stop(run_dir, environment)
    lead = outcome.lead.after
    message = text.get("app.runs.stopped", status=lead.label(), workers=len(outcome.workers))
    if lead.state in ("refused", "damaged") and lead.detail:
        message = f"{message}: {lead.detail}"
    return Outcome(message)


@_refusal_said
def resume(run_dir: Path, environment: Environment, text: WizardText) -> Outcome:
    """The resumed lead, to run in this terminal (as `okstra resume --exec`); refused
    while the lead still runs."""
    run = read_run(run_dir)
    if observe(run, environment).alive:
        return Outcome(text.get("app.runs.still_running", run=run.ref))
    outcome = resume_run(run_dir, environment=environment, wait=0)
    if not outcome.ok:
        return Outcome(outcome.message() or text.get("app.runs.no_resume", run=run.ref))
    command = exec_command(outcome, environment)
    env = {**environment.env, **command.env}
    argv = tuple(command.argv)
    return Outcome(request=LaunchRequest(argv, command.cwd, env, run_dir=run.run_dir, resumed=True))
