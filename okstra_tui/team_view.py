"""The team of the run highlighted on the runs screen: who runs, waits or is done.

Each member with its state (`running`, `waiting for input`, `idle`, `stalled`,
`exited N`, `stopped`, `lost`, `prepared`), and a preview of a live pane's last lines — the lead's
when it runs in tmux, else the newest running worker's output. Looking records the
end of a worker nobody saw end (as `okstra worker status` does); it runs in a worker
thread of the screen, never on the UI thread.
"""

from __future__ import annotations

from pathlib import Path

from okstra_core.display import inert
from okstra_core.environment import Environment
from okstra_core.errors import OkstraError
from okstra_core.life.activity import lead_activity
from okstra_core.life.lead import observe, read_run
from okstra_core.life.runs import RunRow
from okstra_core.life.workers import files
from okstra_core.life.workers.observe import observe_team
from okstra_core.life.workers.summary import shown_state
from okstra_core.wizard.text import WizardText

from .widgets.option_table import pad

PREVIEW_LINES = 8


def team_lines(run_dir: Path, environment: Environment, text: WizardText) -> list[str]:
    """The lines of the team panel (every value made inert)."""
    try:
        run = read_run(run_dir)
        lead = observe(run, environment)
        team = observe_team(run_dir, environment)
    except OkstraError as exc:
        return [inert(exc.render())]
    activity = lead_activity(run, environment) if lead.alive else None
    lines = [text.get("app.runs.team_title", count=len(team))]
    preview: list[str] = []
    for member in team:
        state = shown_state(member)
        if member.leader:
            state = activity.state if activity is not None else lead.label()
            preview = list(activity.lines[-PREVIEW_LINES:]) if activity is not None else []
        model = member.model_ref or "-"
        lines.append(f"  {pad(inert(member.short), 16)} {pad(inert(state), 20)} {inert(model)}")
    running = [m for m in team if m.running and not m.leader]
    if not preview and running:
        newest = running[-1]
        preview = files.tail_lines(run_dir, newest.role_execution_ref, PREVIEW_LINES)
        lines.append(text.get("app.runs.preview_worker", who=inert(newest.short)))
    elif preview:
        lines.append(text.get("app.runs.preview_lead"))
    lines += [f"  | {inert(line)}" for line in preview]
    return lines


def team_of(row: RunRow, environment: Environment, text: WizardText) -> list[str]:
    """`team_lines` of a runs-screen row (nothing for a damaged run)."""
    if row.problem and row.lead is None:
        return []
    return team_lines(row.run_dir, environment, text)
