"""`okstra worker send`: a follow-up turn of an ended worker's own conversation.

The provider's `[launch] worker_resume` continues the session the worker's start used
(minted by okstra, or found in its output for a CLI that mints its own). The turn runs
where the worker ran (its worktree, for a writer) with its prompt on standard input,
on a surface as a start does. The ended turn's files move to `turn-<n>/` of the
worker's directory; the new turn writes its own in their place, so `wait`, `result` and
`status` speak of the latest turn. Each turn is recorded on the role execution
(`turns`), and its start and end in the timeline as a start's are.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from ...catalog import Catalog, load_catalog
from ...catalog.settings import TeamSettings
from ...documents import RunManifest
from ...documents.worker import WorkerLaunch
from ...environment import Environment
from ...launch import worker_argv
from . import files
from .observe import observe_team
from .plan import StartPlan, plan_follow_up
from .record import read_manifest_bytes, record_next_turn, run_lock
from .start import KICKOFF, Started, launch_worker
from .surfaces import choose_surface
from .team import members


def _turns(manifest: RunManifest, ref: str) -> int:
    """How many turns the worker has had (1 for a start recorded before turns were)."""
    execution = next(e for e in manifest.role_executions if e.role_execution_ref == ref)
    return max(len(execution.turns or ()), 1)


def _launch(
    run_dir: Path,
    plan: StartPlan,
    session: str,
    number: int,
    surface: Any,
    environment: Environment,
) -> WorkerLaunch:
    """The follow-up's launch: the ended turn's place and worktree, the resume argv."""
    member = plan.member
    before = files.read_launch(run_dir, member.ref)
    directory = files.worker_dir(run_dir, member.ref)
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
    return WorkerLaunch(
        run_dir=str(run_dir),
        role_execution_ref=member.ref,
        participant_ref=member.participant_ref,
        label=member.label,
        role=member.role,
        provider=member.provider,
        model_ref=member.model_ref,
        argv=argv,
        env={},
        cwd=before.cwd,
        surface=surface,
        result_file=files.RESULT if names_result else None,
        session_id=session,
        started_at=environment.now().isoformat(timespec="seconds"),
        worktree=before.worktree,
        branch=before.branch,
        base_commit=before.base_commit,
        tree_note=before.tree_note,
        turn=number,
        session_pattern=None,
        usage_format=plan.provider.usage.format if plan.provider.usage is not None else None,
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
        return _send(
            run_dir,
            manifest,
            plan,
            session,
            prompt,
            chosen,
            server,
            environment,
            catalog.config.team,
        )


def _send(
    run_dir: Path,
    manifest: RunManifest,
    plan: StartPlan,
    session: str,
    prompt: str,
    surface: Any,
    server: Any,
    environment: Environment,
    settings: TeamSettings,
) -> Started:
    ref = plan.member.ref
    number = _turns(manifest, ref) + 1
    launch = dataclasses.replace(
        _launch(run_dir, plan, session, number, surface, environment),
        log_limit=settings.log_limit_mib * 1024 * 1024,
        keep_pane=settings.keep_ended_panes,
    )
    now = launch.started_at
    files.archive_turn(run_dir, ref, number - 1)
    manifest = record_next_turn(run_dir, ref, number - 1, now=now)
    return launch_worker(
        run_dir, manifest, plan, launch, prompt, server, environment, settings.panes_per_window
    )
