"""What the app does with a run picked from a list (start screen, runs screen).

Reading the runs looks at each lead (a tmux pane or a process), which records an exit
the first time it is seen; stopping waits for the lead to end. Both can take seconds:
the screens call them from worker threads. Attaching outside tmux and resuming hand the
terminal over: they return a `LaunchRequest` the app exits with (entry.py runs it,
okstra staying the lead's parent for a resume).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

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


@dataclass(frozen=True)
class Outcome:
    """What an action on a run did: a line to show, or the terminal to hand over."""

    message: str = ""
    request: LaunchRequest | None = None


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

    A damaged run is a row with its `problem`; it never hides the others. Without a
    project (no `.okstra` here yet) there are no runs of this project: other projects'
    runs show only when every project's are asked for (`show_all`).
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
    """The highlighted run: its lead, what can be done with it, and why it is odd.

    Only the actions that can work for the run are offered (`RunRow.next_steps`):
    attach with a window, resume with a known session id.
    """
    lines = [text.get("app.runs.detail", run=row.run_ref, status=lead_label(row, text))]
    lines += [text.get("app.runs.next", command=step) for step in row.next_steps]
    why = (row.lead.detail if row.lead is not None else None) or row.problem
    if why:
        lines.append(why)
    return lines


def attach(run_dir: Path, environment: Environment) -> Outcome:
    """Show the lead's tmux window: switch to it inside tmux, else hand the terminal over."""
    try:
        run = read_run(run_dir)
    except OkstraError as exc:
        return Outcome(exc.render())
    plan = plan_attach(run, environment)
    if plan.argv is None:
        return Outcome(plan.problem or "")
    if plan.switch:
        return Outcome(switch_client(plan) or "")
    return Outcome(request=LaunchRequest(tuple(plan.argv), run.run_dir, plan.env))


def attach_worker(run_dir: Path, who: str, environment: Environment) -> Outcome:
    """Show a worker's tmux pane (`worker_attach`); a background worker, or a pane that
    is gone, gets the core's reason."""
    try:
        target = worker_attach(run_dir, environment, who)
    except OkstraError as exc:
        return Outcome(exc.render())
    if target.switch:
        return Outcome(run_switch(target.argv, target.env) or "")
    return Outcome(request=LaunchRequest(tuple(target.argv), run_dir, target.env))


def stop_worker(run_dir: Path, who: str, environment: Environment, text: WizardText) -> Outcome:
    """Stop one worker (`worker_stop`: SIGTERM, SIGKILL after the grace time; blocks, a
    worker thread calls it)."""
    try:
        stopped = worker_stop(run_dir, environment, who)
    except OkstraError as exc:
        return Outcome(exc.render())
    return Outcome(text.get("app.team.stopped", who=who, status=stopped.worker.status))


def stop_lead_only(run_dir: Path, environment: Environment, text: WizardText) -> Outcome:
    """Stop the lead alone (`okstra stop --lead-only`): its workers keep running."""
    try:
        outcome = team_stop(run_dir, environment, lead_only=True)
    except OkstraError as exc:
        return Outcome(exc.render())
    lead = outcome.lead.after
    message = text.get("app.team.lead_stopped", status=lead.label())
    return Outcome(f"{message}: {lead.detail}" if lead.detail and not outcome.ok else message)


def send_worker(
    run_dir: Path, who: str, prompt: str, environment: Environment, text: WizardText
) -> Outcome:
    """Send an ended worker a follow-up (`worker_send`); the core's refusal said as is."""
    try:
        started = worker_send(run_dir, environment, who, prompt=prompt)
    except OkstraError as exc:
        return Outcome(exc.render())
    return Outcome(text.get("app.team.sent", who=started.label.split(" ")[0]))


def stop_lead(run_dir: Path, environment: Environment, text: WizardText) -> Outcome:
    """Stop the team: the lead, then every running worker (`okstra stop`; blocks up to
    the grace time: a worker calls it).

    The same checks as `okstra stop`: a lead okstra did not start (`refused`) or a
    damaged run is never signalled; the message says why.
    """
    try:
        outcome = team_stop(run_dir, environment)
    except OkstraError as exc:
        return Outcome(exc.render())
    lead = outcome.lead.after
    message = text.get("app.runs.stopped", status=lead.label(), workers=len(outcome.workers))
    if lead.state in ("refused", "damaged") and lead.detail:
        message = f"{message}: {lead.detail}"
    return Outcome(message)


def resume(run_dir: Path, environment: Environment, text: WizardText) -> Outcome:
    """The resumed lead, to run in this terminal — rebuilt from the catalog, as
    `okstra resume --exec` does; refused while the lead still runs."""
    try:
        run = read_run(run_dir)
        status = observe(run, environment)
        if status.alive:
            return Outcome(text.get("app.runs.still_running", run=run.ref))
        outcome = resume_run(run_dir, environment=environment, wait=0)
        if not outcome.ok:
            return Outcome(outcome.message() or text.get("app.runs.no_resume", run=run.ref))
        command = exec_command(outcome, environment)
    except OkstraError as exc:
        return Outcome(exc.render())
    env = {**environment.env, **command.env}
    return Outcome(
        request=LaunchRequest(
            tuple(command.argv), command.cwd, env, run_dir=run.run_dir, resumed=True
        )
    )
