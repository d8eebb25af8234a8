"""The prepare pipeline (request → resolved team → run files → launch) and its reply.

Steps 1–4 and preflight read only (a problem raises before anything is written); step
5 allocates the run sequence under a per-task lock; step 6 writes the planned files
(project.json re-read and upserted under a project lock); step 7 launches. Links and
special files on the way are refused before the writes, and checked again just before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from .. import launch as launcher  # its process-running parts load on first use
from ..catalog.models import LEADER
from ..documents import trust
from ..documents.task import LeadLaunched, LeadLaunchFailed
from ..environment import Environment
from ..errors import OkstraError, PrepareError, UsageError
from ..launch.mcp import server_for
from ..launch.plan import LaunchPlan, lead_access_argv, plan_launch
from ..launch.sheet import ResumeEntry, find_okstra, write_resume_sheet
from ..paths import user_dirs
from ..records import config, dataclass, fields_of
from ..request import RunRequest
from ..store import append_line, make_private_dirs
from ..tasks import LEAD_PROMPT, TASK_MANIFEST, TIMELINE
from ..trust import require_trusted
from . import runfiles
from .lead_prompt import KICKOFF
from .manifest import ExecutionManifest
from .resolve import (
    Resolved,
    StepCallback,
    check_write_targets,
    noop_step,
    project_json_path,
    project_lock,
    resolve_request,
    run_preflight,
)
from .run_documents import RunFiles, plan_run, run_dir_for
from .runfiles import PlannedFile

if TYPE_CHECKING:
    from ..launch import LaunchResult, PreflightResult
    from ..launch.backends import LeadExit

__all__ = ["KICKOFF", "LAUNCH_CHOICES", "PrepareResult", "StepCallback", "prepare"]

LAUNCH_CHOICES = ("auto", "tmux", "exec", "none")


@dataclass(frozen=True)
class TeamMember:
    """One role execution as the prepare reply lists it (`team`)."""

    __pydantic_config__ = config(camel_case=True)

    role_execution_ref: str
    participant_ref: str
    role: str
    ordinal: int
    model_ref: str | None
    runner: str
    execution_label: str


def team_of(manifest: ExecutionManifest) -> tuple[TeamMember, ...]:
    """The reply's `team`: every role execution, in the manifest's order."""
    names = "role_execution_ref participant_ref role ordinal model_ref execution_label"
    return tuple(
        TeamMember(runner=r.binding.runner, **fields_of(r, names)) for r in manifest.role_executions
    )


@dataclass(frozen=True, kw_only=True)
class PrepareResult:
    """What a prepare did (or, for a dry run, would do).

    Its protocol data begins with `ok` and ends with the launch's `error`; `manifest` and
    `exec_env` are for Python only. `notes`: problems a dry run found; `exec_argv`: what
    the caller execs (exec backend); `base_ref`/`base_commit`: the writers' base.
    """

    __pydantic_config__ = config(
        camel_case=True,
        skip=("manifest", "exec_env"),
        views=("ok", "error"),
        first=("ok",),
        omit_none=("error", "base_ref", "base_commit"),
    )

    dry_run: bool
    run_id: str
    run_dir: Path
    entry_mode: str
    files: tuple[PlannedFile, ...]
    lead_argv: tuple[str, ...] | None
    lead_env: Mapping[str, str]
    lead_session_id: str | None = None
    tmux_commands: tuple[tuple[str, ...], ...]
    preflight: tuple[PreflightResult, ...]
    backend: str
    lead_prompt_path: Path
    resume_argv: tuple[str, ...] | None = None
    team: tuple[TeamMember, ...]
    launch: LaunchResult | None = None
    exec_argv: tuple[str, ...] | None = None
    notes: tuple[str, ...] = ()
    manifest: ExecutionManifest
    exec_env: Mapping[str, str] | None = None
    base_ref: str | None = None
    base_commit: str | None = None
    lead_access: str = "ask"

    @property
    def ok(self) -> bool:
        """Launched (or nothing to launch), and the lead did not exit while watched."""
        return self.launch is None or (self.launch.error is None and not self.lead_exited)

    @property
    def lead_exited(self) -> bool:
        """The lead started, then exited while okstra watched its start."""
        return self.launch is not None and self.launch.lead_exit is not None

    @property
    def error(self) -> str | None:
        """Why the launch failed, or that the lead exited at once, or None."""
        if self.launch is None:
            return None
        if self.launch.lead_exit is not None:
            return lead_exit_text(self.launch.lead_exit, self.run_id)
        return self.launch.error_text


def lead_exit_text(lead_exit: LeadExit, run_id: str) -> str:
    """`the lead exited 1 after 1.6 s: <last lines>; …` with what to do next."""
    said = [line.strip() for line in lead_exit.last_lines if line.strip()][-5:]
    tail = f": {' | '.join(said)}" if said else ""
    return (
        f"{lead_exit.headline()}{tail}; check its CLI with `okstra doctor` (installed, logged "
        f"in?), then resume it with `okstra resume {run_id} --exec` or prepare again"
    )


def _plan_launch(
    resolved: Resolved, prompt_file: Path, environment: Environment, mcp: bool
) -> LaunchPlan | None:
    """The lead's launch; with `mcp`, its CLI is given the run's MCP server."""
    if not resolved.spawns_leader:
        return None
    server = server_for(prompt_file.parent, find_okstra(environment)) if mcp else None
    return plan_launch(
        resolved.leader_provider,
        model=resolved.manifest.leader.execution,
        prompt_file=prompt_file,
        kickoff=KICKOFF,
        project_root=resolved.request.project_root,
        environment=environment,
        mcp=server,
        access=lead_access_argv(resolved.leader_provider, resolved.request.lead_access or "ask"),
    )


def _planned_result(
    resolved: Resolved,
    run: RunFiles,
    plan: LaunchPlan | None,
    checks: Sequence[PreflightResult],
    backend: str,
    window: str,
    env: Environment,
    *,
    dry_run: bool,
    notes: Sequence[str] = (),
) -> PrepareResult:
    """The result of a planned run, before any launch: the same for a dry and a real run."""
    root = resolved.request.project_root
    tmux = tuple(tuple(c) for c in launcher.tmux_commands(plan, window, root, env)) if plan else ()
    return PrepareResult(
        dry_run=dry_run,
        **fields_of(run, "run_id run_dir files lead_prompt_path"),
        **fields_of(resolved, "manifest entry_mode"),
        lead_argv=tuple(plan.argv) if plan else None,
        lead_env=dict(plan.env) if plan else {},
        tmux_commands=tmux,
        preflight=tuple(checks),
        backend=backend,
        lead_session_id=plan.session_id if plan else None,
        resume_argv=(plan.resume_argv() or None) if plan else None,
        team=team_of(resolved.manifest),
        base_ref=resolved.base.ref if resolved.base else None,
        base_commit=resolved.base.commit if resolved.base else None,
        lead_access=resolved.request.lead_access or "ask",
        notes=(*resolved.config_notes, *notes),
    )


def prepare(
    request: RunRequest,
    *,
    launch: str = "auto",
    dry_run: bool = False,
    environment: Environment | None = None,
    on_step: StepCallback | None = None,
    mcp: bool | None = None,
) -> PrepareResult:
    """Prepare (and launch) the run `request` describes — the core's one entry point.

    `dry_run`: plan every file, write nothing; `on_step` is called as each step starts;
    `mcp`: give the lead okstra's MCP server (None: as the user's config says). Raises
    `OkstraError` for any refused input (before anything is written) or write failure.
    """
    env = environment or Environment.real()
    step = on_step or noop_step
    if launch not in LAUNCH_CHOICES:
        raise UsageError(
            f"unknown launch backend {launch!r}: expected one of {', '.join(LAUNCH_CHOICES)}",
            field="--launch",
        )
    override = runfiles.sequence_override(env.env)  # refused before anything is read
    resolved = resolve_request(request, env, step)
    with_mcp = resolved.catalog.config.mcp if mcp is None else mcp
    step("preflight")
    checks = run_preflight(resolved, env)
    failed = [p for p in checks if not p.ok]
    backend = launcher.choose_backend(launch, env) if resolved.spawns_leader else "none"
    window = f"{request.task_group}/{request.task_id}"
    if dry_run:
        step("planning the run (dry run)")
        return _dry_run(resolved, checks, backend, window, env, override, with_mcp)
    if failed:
        lines = ["preflight failed:"] + [f"  {p.message()}" for p in failed]
        raise PrepareError("\n".join(lines))
    if resolved.spawns_leader and backend != "none":
        require_trusted(request.project_root, env.env, doing="launch the lead")
    resolved, run, plan = _write_run(resolved, env, step, override, with_mcp)
    result = _planned_result(resolved, run, plan, checks, backend, window, env, dry_run=False)
    if plan is None or backend == "none":
        return result
    step("launching the lead")
    activity = resolved.catalog.provider(plan.provider_id).activity
    outcome = launcher.start(plan, backend, window, request.project_root, env, activity=activity)
    return _after_launch(result, run, plan, outcome, env)


def _dry_run(
    resolved: Resolved,
    checks: Sequence[PreflightResult],
    backend: str,
    window: str,
    env: Environment,
    override: int | None = None,
    mcp: bool = True,
) -> PrepareResult:
    """Every file the next run would have, written nowhere; problems become notes."""
    seq = runfiles.peek_next_sequence(resolved.task_root, resolved.request.task_type, override)
    notes = [p.message() for p in checks if not p.ok]
    prompt_file = run_dir_for(resolved, seq) / LEAD_PROMPT
    try:
        plan = _plan_launch(resolved, prompt_file, env, mcp)
    except OkstraError as exc:
        # A dry run reports what is wrong instead of stopping at it.
        plan = None
        notes.append(exc.render())
    run = plan_run(resolved, seq=seq, environment=env, launch_plan=plan)
    return _planned_result(
        resolved, run, plan, checks, backend, window, env, dry_run=True, notes=notes
    )


def _write_run(
    resolved: Resolved,
    env: Environment,
    step: StepCallback,
    override: int | None = None,
    mcp: bool = True,
) -> tuple[Resolved, RunFiles, LaunchPlan | None]:
    """Steps 5–6: reserve the run's number and write its files (under the locks); returns
    the request with the shared files re-read under the locks, the files, the plan."""
    step("allocating the run sequence")
    root, troot = resolved.request.project_root, resolved.task_root
    # Again, right before the first write: a symlink may have appeared since step 1.
    check_write_targets(root, troot)
    make_private_dirs(troot, inside=root)
    with runfiles.task_lock(troot):
        seq, reserved = runfiles.allocate_run_dir(troot, resolved.request.task_type, override)
        with runfiles.reservation(reserved):
            # Re-read under the lock: another prepare may have extended the task since.
            resolved = replace(resolved, task_manifest=runfiles.read_task_manifest(troot))
            step("writing the run files")
            plan = _plan_launch(resolved, reserved / LEAD_PROMPT, env, mcp)
            with project_lock(root):
                # Re-read under the project lock: a concurrent task's prepare keeps its entry.
                found = runfiles.read_object(project_json_path(root), "project.json")
                resolved = replace(resolved, project_json=found if found and found.data else None)
                run = plan_run(resolved, seq=seq, environment=env, launch_plan=plan)
                runfiles.apply_run(run.files, run_id=run.run_id, run_dir=run.run_dir)
    # After the locks: a marker names bytes, whoever writes the file next. The task
    # manifest and project.json prepare just wrote are okstra's own bytes.
    shared = {troot / TASK_MANIFEST, project_json_path(root)}
    for f in run.files:
        if f.path in shared:
            trust.remember(f.path, f.content, user_dirs(env.env).cache)
    return resolved, run, plan


def _after_launch(
    result: PrepareResult, run: RunFiles, plan: LaunchPlan, outcome: LaunchResult, env: Environment
) -> PrepareResult:
    """Record a launch: leader status, timeline event, resume sheet once the id is known."""
    now = env.now().isoformat(timespec="seconds")
    troot = run.run_dir.parent.parent
    if outcome.error is not None:
        why = outcome.error.render()
        failed = LeadLaunchFailed(at=now, run_id=run.run_id, backend=outcome.backend, error=why)
        append_line(troot / TIMELINE, failed.dump())
        # The run stays, its lead never ran: listed as `launch failed`, with why.
        changes = {"status": "launch-failed", "launch_backend": outcome.backend, "end_detail": why}
        runfiles.update_participant(run.run_manifest_path, "participant-001", changes)
        return replace(result, launch=outcome)
    runfiles.update_participant(
        run.run_manifest_path,
        "participant-001",
        {
            "status": "launched",
            "session_ref": outcome.session_id,
            "window_ref": outcome.window_ref,
            "launch_backend": outcome.backend,
            # Exact, not rounded to the second: a later session lookup starts here.
            "launched_at": outcome.launched_at.isoformat(),
            # Where okstra looks for the lead later (its exit status, attach, stop).
            **outcome.where(),
        },
        lead_session_id=outcome.session_id,
    )
    launched = LeadLaunched(
        at=now,
        run_id=run.run_id,
        **fields_of(outcome, "backend session_id window_ref pane_ref pending_discovery"),
    )
    append_line(troot / TIMELINE, launched.dump())
    if outcome.session_id and outcome.session_id != plan.session_id:
        entry = ResumeEntry.from_plan(
            plan, "participant-001", LEADER, session_id=outcome.session_id, cwd=plan.project_root
        )
        write_resume_sheet(run.run_dir, [entry], okstra=find_okstra(env))
    return replace(
        result,
        launch=outcome,
        lead_session_id=outcome.session_id or result.lead_session_id,
        resume_argv=plan.resume_argv(outcome.session_id) or result.resume_argv,
        exec_argv=tuple(outcome.exec_argv) if outcome.exec_argv else None,
        exec_env=outcome.exec_env,
    )
