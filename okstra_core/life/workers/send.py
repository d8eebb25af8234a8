"""`okstra worker send`: a follow-up turn of an ended worker's own conversation.

`[launch] worker_resume` continues the start's session, where the worker ran, prompt on
stdin. The ended turn's files move to `turn-<n>/`, so `wait`, `result` and `status`
speak of the latest turn; each turn is recorded on the role execution and the timeline.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...catalog import Catalog, load_catalog
from ...catalog.settings import TeamSettings
from ...documents.worker import WorkerLaunch
from ...environment import Environment
from ...launch import worker_argv
from . import files
from .observe import observe_team
from .plan import StartPlan, plan_follow_up
from .record import read_manifest_bytes, record_next_turn, run_lock
from .start import KICKOFF, Started, launch_record, launch_worker
from .surfaces import choose_surface
from .team import members


def _launch(
    run_dir: Path,
    plan: StartPlan,
    session: str,
    number: int,
    surface: Any,
    settings: TeamSettings,
    environment: Environment,
) -> WorkerLaunch:
    """The follow-up's launch: the ended turn's place and worktree, the resume argv."""
    before = files.read_launch(run_dir, plan.member.ref)
    directory = files.worker_dir(run_dir, plan.member.ref)
    argv = worker_argv(
        plan.provider,
        model=plan.model_value,
        writes=plan.writes,
        values={
            "cli": plan.cli,
            "session_id": session,
            "prompt_file": str(directory / files.PROMPT),
            "result_file": str(directory / files.RESULT),
            "project_root": before.cwd,
            "kickoff": KICKOFF,
        },
        env=environment.env,
        follow_up=True,
    )
    names_result = "{result_file}" in "".join(plan.provider.launch.worker_resume or ())
    return launch_record(
        run_dir,
        plan,
        settings,
        environment,
        argv=argv,
        cwd=before.cwd,
        surface=surface,
        result_file=files.RESULT if names_result else None,
        session_id=session,
        worktree=before.worktree,
        branch=before.branch,
        base_commit=before.base_commit,
        tree_note=before.tree_note,
        turn=number,
        session_pattern=None,
    )


def send_worker(
    run_dir: Path,
    who: str,
    prompt: str,
    environment: Environment,
    *,
    surface: str | None = None,
    catalog: Catalog | None = None,
) -> Started:
    """Send the ended worker `who` a follow-up `prompt` in its own conversation.

    Raises:
        UsageError: refused (see `plan_follow_up`, `choose_surface`); nothing changed.
        LaunchError: the surface could not be opened.
    """
    observe_team(run_dir, environment)  # an end nobody recorded yet is recorded first
    catalog = catalog or load_catalog(environment)
    _, manifest, planned_on = read_manifest_bytes(run_dir)
    plan, session = plan_follow_up(manifest, who, catalog, environment)
    leader = next(m for m in members(manifest) if m.leader)
    chosen, server = choose_surface(surface, leader, environment)
    with run_lock(run_dir):
        _, now, data = read_manifest_bytes(run_dir)
        if data != planned_on:  # another writer changed the run meanwhile
            manifest = now
            plan, session = plan_follow_up(now, who, catalog, environment)
        ref, settings = plan.member.ref, catalog.config.team
        execution = next(e for e in manifest.role_executions if e.role_execution_ref == ref)
        ended = max(len(execution.turns or ()), 1)  # 1 for a start recorded before turns
        launch = _launch(run_dir, plan, session, ended + 1, chosen, settings, environment)
        files.archive_turn(run_dir, ref, ended)
        manifest = record_next_turn(run_dir, ref, ended, now=launch.started_at)
        return launch_worker(
            run_dir, manifest, plan, launch, prompt, server, environment, settings.panes_per_window
        )
