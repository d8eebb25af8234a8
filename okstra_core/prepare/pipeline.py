"""The prepare pipeline: run request → validated, resolved team → run files → launch.

Steps 1–4 (validate, parse role args, resolve, build the manifest) and preflight
(skipped by `--launch none`, which starts nothing) read only; a problem there raises
before anything is written. Step 5 allocates the
run sequence under a per-task lock; step 6 writes the planned files (the project-wide
`.okstra/project.json` re-read and upserted under a project lock); step 7 launches.

Every directory and file prepare writes through (`.okstra`, `.okstra/tasks`, the
group and task directories, their lock sidecars and append-only logs) is okstra's
own: a symbolic link anywhere below the project root on the way (wherever it points),
or a FIFO or device where a file belongs, is refused before anything is written, and
checked again just before the writes; the store then opens each file without
following links.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import __version__
from .. import launch as launcher  # its process-running parts load on first use
from ..catalog.loaders import detect_host, load_catalog, load_project_config
from ..catalog.models import (
    LEADER,
    EntryMode,
    HostSpec,
    Profile,
    ProviderSpec,
)
from ..defaults import load_scopes
from ..documents import (
    LeadLaunched,
    LeadLaunchFailed,
    LeadPromptMeta,
    ProjectDocument,
    RunInputs,
    RunManifest,
    RunPrepared,
    RunsIndexRow,
    TaskManifest,
    trust,
)
from ..documents.run import ApprovedPlanRef, FileRef
from ..environment import Environment
from ..errors import FileSystemError, OkstraError, PrepareError, UsageError
from ..launch.plan import LaunchPlan, plan_launch
from ..launch.sheet import ResumeEntry, find_okstra, render_resume_sheet, write_resume_sheet
from ..paths import user_dirs
from ..pool import ModelPool
from ..records import dataclass, field
from ..request import RunRequest
from ..resolver import check_entry_mode, resolve_assignments
from ..store import (
    MAX_FILE_BYTES,
    FileLock,
    append_line,
    check_no_links,
    decode_utf8,
    lock_path_for,
    make_private_dirs,
    read_bytes,
)
from ..tasks import OKSTRA_DIR, TASK_MANIFEST, slugify, task_root
from . import runfiles
from .dispatch import dispatch_context
from .manifest import AssignmentLike, ExecutionManifest, build_execution_manifest
from .plan_check import ApprovedPlan, check_approved_plan, check_brief
from .render import render_template
from .runfiles import PlannedFile

if TYPE_CHECKING:
    from ..catalog.loaders import Catalog
    from ..launch import LaunchResult, PreflightResult
KICKOFF = "Begin the run described in your instructions."
PROJECT_JSON = "project.json"
LAUNCH_CHOICES = ("auto", "tmux", "exec", "none")
StepCallback = Callable[[str], None]


def _noop(_: str) -> None:
    return None


@dataclass(frozen=True)
class Resolved:
    """The outcome of steps 1–4: everything needed to plan the run's files."""

    request: RunRequest
    catalog: Catalog
    profile: Profile
    host: HostSpec
    entry_mode: str
    assignments: tuple[AssignmentLike, ...]
    manifest: ExecutionManifest
    brief_path: Path
    brief_text: str
    approved_plan: ApprovedPlan | None
    task_root: Path
    project_id: str
    # As read (decoded, and the exact bytes: see `okstra_core.documents.trust`); None
    # when the file is absent (or, for project.json, empty).
    project_json: runfiles.Existing | None
    task_manifest: runfiles.Existing | None

    @property
    def leader_provider(self) -> ProviderSpec:
        return self.catalog.provider(self.manifest.leader.provider)

    @property
    def spawns_leader(self) -> bool:
        return self.entry_mode != "current-session"


@dataclass(frozen=True)
class PrepareResult:
    """What a prepare did (or, for a dry run, would do).

    Attributes:
        dry_run: nothing was written.
        run_id: `<task-type>-<seq>` (a dry run shows the next free number).
        run_dir: the run directory.
        files: every file written (or that would be), with its digest.
        lead_argv: the exact argv of the lead CLI (None in current-session mode).
        lead_env: the extra environment the lead CLI gets.
        tmux_commands: the tmux argv(s) a tmux launch runs.
        preflight: per CLI-spawning role instance.
        backend: the launch backend chosen ("none" when nothing launches).
        launch: the launch result (None when nothing was launched).
        exec_argv: for the exec backend, what the caller execs after it exits.
        exec_env: the full environment for that exec.
        manifest: the execution manifest.
        lead_prompt_path: where the lead prompt is (the host reads it in
            current-session mode).
        resume_argv: how to resume the lead session, once its id is known.
    """

    dry_run: bool
    run_id: str
    run_dir: Path
    files: tuple[PlannedFile, ...]
    lead_argv: tuple[str, ...] | None
    lead_env: Mapping[str, str]
    tmux_commands: tuple[tuple[str, ...], ...]
    preflight: tuple[PreflightResult, ...]
    backend: str
    manifest: ExecutionManifest
    lead_prompt_path: Path
    entry_mode: str
    lead_session_id: str | None = None
    resume_argv: tuple[str, ...] | None = None
    launch: LaunchResult | None = None
    exec_argv: tuple[str, ...] | None = None
    exec_env: Mapping[str, str] | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return self.launch is None or self.launch.error is None

    def to_json(self) -> dict[str, Any]:
        """The protocol document (camelCase)."""
        data: dict[str, Any] = {
            "ok": self.ok,
            "dryRun": self.dry_run,
            "runId": self.run_id,
            "runDir": str(self.run_dir),
            "entryMode": self.entry_mode,
            "files": [f.to_json() for f in self.files],
            "leadArgv": list(self.lead_argv) if self.lead_argv is not None else None,
            "leadEnv": dict(self.lead_env),
            "leadSessionId": self.lead_session_id,
            "tmuxCommands": [list(c) for c in self.tmux_commands],
            "preflight": [p.to_json() for p in self.preflight],
            "backend": self.backend,
            "leadPromptPath": str(self.lead_prompt_path),
            "resumeArgv": list(self.resume_argv) if self.resume_argv else None,
            "team": [
                {
                    "roleExecutionRef": r.role_execution_ref,
                    "participantRef": r.participant_ref,
                    "role": r.role,
                    "ordinal": r.ordinal,
                    "modelRef": r.model_ref,
                    "runner": r.binding.runner,
                    "executionLabel": r.execution_label,
                }
                for r in self.manifest.role_executions
            ],
            "launch": self.launch.to_json() if self.launch is not None else None,
            "execArgv": list(self.exec_argv) if self.exec_argv is not None else None,
            "notes": list(self.notes),
        }
        if self.launch is not None and self.launch.error is not None:
            data["error"] = self.launch.error.render()
        return data


# --------------------------------------------------------------------------- steps 1–4


def project_json_path(project_root: Path) -> Path:
    """`<project>/.okstra/project.json`."""
    return project_root / OKSTRA_DIR / PROJECT_JSON


def project_lock(project_root: Path) -> FileLock:
    """The project-wide lock under which `.okstra/project.json` is re-read and upserted.

    Prepares of different tasks hold different task locks, so project.json needs its
    own; it is always taken after a task lock, never before, so the two cannot deadlock.
    """
    return FileLock(project_json_path(project_root), timeout=runfiles.SEQUENCE_LOCK_TIMEOUT)


def check_write_targets(project_root: Path, troot: Path) -> None:
    """Refuse a task whose files would be written through a link or into a special file.

    `.okstra` is okstra's own: nothing below the project root on the way to what
    prepare writes may be a symbolic link (wherever it points), a directory's place
    may not hold a file, and a file's place may not hold a FIFO, device or socket.
    Checked for the task's `runs` directory (and so `.okstra`, `.okstra/tasks`, the
    group and the task directory above it) and every file prepare writes: lock
    sidecars, the task manifest, the timeline, project.json.

    Raises:
        PrepareError: naming the offending path and what it is (nothing was written).
    """
    runs = troot / "runs"
    timeline = troot / runfiles.TIMELINE
    project_json = project_json_path(project_root)
    targets = (
        runs,
        lock_path_for(runs),
        troot / TASK_MANIFEST,
        troot / runfiles.TASK_INDEX,
        timeline,
        lock_path_for(timeline),
        project_json,
        lock_path_for(project_json),
    )
    for target in targets:
        try:
            check_no_links(project_root, target)
        except FileSystemError as exc:
            raise PrepareError(exc.message, path=exc.path) from None


def _read_brief(path: Path) -> str:
    """The brief's text: a regular UTF-8 file (never a FIFO or device), size-capped."""
    data = read_bytes(path, what="the brief", error=PrepareError, limit=MAX_FILE_BYTES)
    return decode_utf8(data, path, error=PrepareError)


def resolve_request(
    request: RunRequest, environment: Environment, on_step: StepCallback = _noop
) -> Resolved:
    """Steps 1–4: validate, resolve the team, build the manifest.

    The request's shape and the profile's ranges were checked where it was built;
    here the project's files are checked and the resolver decides feasibility.
    Reads only. Raises an `OkstraError` (PrepareError, UsageError, DataFileError,
    AssignmentResolutionError) at the first problem.
    """
    on_step("validating inputs")
    root = request.project_root
    if not root.is_dir():
        raise PrepareError(f"project root is not a directory: {root}", field="--project-root")
    troot = task_root(root, request.task_group, request.task_id)
    # Before anything under .okstra is read: a symlinked .okstra must not even be read.
    check_write_targets(root, troot)
    brief_path = check_brief(root, request.brief)
    brief_text = _read_brief(brief_path)
    catalog = load_catalog(environment)
    profile = catalog.profile(request.task_type)
    approved: ApprovedPlan | None = None
    if profile.needs_approved_plan:
        on_step("checking the approved plan")
        approved = check_approved_plan(request.approved_plan, project_root=root, task_root=troot)
    elif request.approved_plan:
        needing = sorted(t for t, p in catalog.profiles.items() if p.needs_approved_plan)
        raise UsageError(
            f"--approved-plan applies only to {', '.join(needing) or 'no task type'}",
            field="--approved-plan",
        )
    context = request.host
    host = catalog.host(context.host_id) if context.host_id else detect_host(environment, catalog)
    entry_mode: EntryMode = context.entry_mode
    check_entry_mode(host, entry_mode)
    project_config = load_project_config(root)
    task_manifest = runfiles.read_task_manifest(troot)

    on_step("resolving the team")
    pool = ModelPool.from_catalog(catalog, environment)
    scopes = load_scopes(root, catalog)
    plan = resolve_assignments(
        profile,
        request.role_counts,
        request.role_models,
        scopes,
        pool,
        host,
        entry_mode,
        current_session_model=context.model_ref,
    )

    on_step("building the execution manifest")
    manifest = build_execution_manifest(
        plan.assignments,
        plan.dynamic_roles,
        leader_model_reported=context.model_ref is not None,
        writing_roles={r.role for r in profile.roles if r.writes},
    )
    project_id = project_config.project_id or slugify(root.name) or "project"
    return Resolved(
        request=request,
        catalog=catalog,
        profile=profile,
        host=host,
        entry_mode=entry_mode,
        assignments=tuple(plan.assignments),
        manifest=manifest,
        brief_path=brief_path,
        brief_text=brief_text,
        approved_plan=approved,
        task_root=troot,
        project_id=project_id,
        project_json=runfiles.Existing(dict(project_config.raw), project_config.data)
        if project_config.raw and project_config.data is not None
        else None,
        task_manifest=task_manifest,
    )


def run_preflight(resolved: Resolved, environment: Environment) -> list[PreflightResult]:
    """Preflight every CLI-spawning role instance."""
    instances = [
        launcher.RoleInstance(
            role=r.role,
            ordinal=r.ordinal,
            provider=resolved.catalog.provider(r.provider),
            runner=r.binding.runner,
        )
        for r in resolved.manifest.role_executions
    ]
    return launcher.preflight(instances, environment)


# --------------------------------------------------------------------------- rendering


def _rel(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


# --------------------------------------------------------------------------- planning


@dataclass(frozen=True)
class _RunPlan:
    """Every file of one run (exact bytes) and the lead's launch plan, before writing."""

    run_id: str
    run_dir: Path
    files: tuple[PlannedFile, ...]
    launch_plan: LaunchPlan | None
    lead_prompt_path: Path
    run_manifest_path: Path


def _plan_launch(
    resolved: Resolved, prompt_file: Path, environment: Environment
) -> LaunchPlan | None:
    if not resolved.spawns_leader:
        return None
    return plan_launch(
        resolved.leader_provider,
        model=resolved.manifest.leader.execution,
        prompt_file=prompt_file,
        kickoff=KICKOFF,
        project_root=resolved.request.project_root,
        environment=environment,
    )


def run_dir_for(resolved: Resolved, seq: int) -> Path:
    return resolved.task_root / "runs" / runfiles.run_name(resolved.request.task_type, seq)


def plan_run(
    resolved: Resolved,
    *,
    seq: int,
    environment: Environment,
    launch_plan: LaunchPlan | None,
) -> _RunPlan:
    """Compute every file of run `seq` (exact bytes), given the lead's launch plan."""
    request = resolved.request
    root = request.project_root
    troot = resolved.task_root
    run_id = runfiles.run_name(request.task_type, seq)
    run_dir = run_dir_for(resolved, seq)
    now = environment.now().isoformat(timespec="seconds")
    paths = {
        "runInputs": run_dir / runfiles.RUN_INPUTS,
        "runManifest": run_dir / runfiles.RUN_MANIFEST,
        "leadPrompt": run_dir / runfiles.LEAD_PROMPT,
        "leadPromptMeta": run_dir / runfiles.LEAD_PROMPT_META,
        "resume": run_dir / "resume.json",
        "resumeScript": run_dir / "resume-lead.sh",
        "taskManifest": troot / TASK_MANIFEST,
        "taskIndex": troot / runfiles.TASK_INDEX,
        "timeline": troot / runfiles.TIMELINE,
    }
    rel = {k: _rel(v, root) for k, v in paths.items()}
    session_id = launch_plan.session_id if launch_plan is not None else None
    brief_rel = _rel(resolved.brief_path, root)
    approved = resolved.approved_plan

    files: list[PlannedFile] = []
    inputs_doc = RunInputs.of(request, run_id)
    files.append(PlannedFile(paths["runInputs"], inputs_doc.to_bytes(), "immutable"))

    run_manifest = RunManifest(
        okstra_version=__version__,
        created_at=now,
        run_id=run_id,
        seq=seq,
        task_type=request.task_type,
        project_id=resolved.project_id,
        project_root=str(root),
        task_key=request.task_key,
        task_group=request.task_group,
        task_id=request.task_id,
        host_runtime=resolved.host.id,
        entry_mode=resolved.entry_mode,
        lead_session_id=session_id,
        lead_session_id_kind=launch_plan.session_id_kind if launch_plan else None,
        brief=FileRef(
            path=brief_rel,
            sha256=hashlib.sha256(resolved.brief_text.encode("utf-8")).hexdigest(),
        ),
        approved_plan=(
            ApprovedPlanRef(
                path=_rel(approved.path, root),
                sha256=approved.sha256,
                stages=tuple(s.stage for s in approved.stages),
            )
            if approved
            else None
        ),
        paths=rel,
        participants=resolved.manifest.participants,
        role_executions=resolved.manifest.role_executions,
        dynamic_roles=resolved.manifest.dynamic_roles,
    )
    files.append(PlannedFile(paths["runManifest"], run_manifest.to_bytes()))

    dispatch = dispatch_context(
        resolved.manifest,
        resolved.catalog,
        task_key=request.task_key,
        run_id=run_id,
        run_dir=_rel(run_dir, root),
    )
    prompt = render_template(
        "lead.md.j2",
        {
            "run": {"id": run_id, "seq": seq, "task_type": request.task_type, "created_at": now},
            "task": {
                "key": request.task_key,
                "group": request.task_group,
                "id": request.task_id,
                "root": rel_or(troot, root),
                "project_root": str(root),
                "project_id": resolved.project_id,
            },
            "profile": {
                "task_type": resolved.profile.task_type,
                "title": resolved.profile.title or resolved.profile.task_type,
                "summary": resolved.profile.summary,
                "body": resolved.profile.body.strip(),
            },
            "host": {"id": resolved.host.id, "entry_mode": resolved.entry_mode},
            **dispatch,
            "brief": {"path": brief_rel, "text": resolved.brief_text.rstrip("\n")},
            "directive": request.directive,
            "related_tasks": list(request.related_tasks),
            "approved_plan": (
                {
                    "path": _rel(approved.path, root),
                    "stages": [
                        {
                            "stage": s.stage,
                            "kind": s.kind,
                            "script": s.script,
                            "requires": list(s.requires),
                            "reason": s.reason,
                        }
                        for s in approved.stages
                    ],
                }
                if approved
                else None
            ),
            "paths": rel,
        },
        environment.env,
    )
    prompt_bytes = prompt.encode("utf-8")
    files.append(PlannedFile(paths["leadPrompt"], prompt_bytes))
    leader = resolved.manifest.leader
    meta = LeadPromptMeta(
        invocation_id=f"{run_id}-lead",
        participant_ref=leader.participant_ref,
        role_execution_ref=leader.role_execution_ref,
        duty=leader.duty,
        attempt=1,
        prompt_sha256=hashlib.sha256(prompt_bytes).hexdigest(),
        prompt_path=rel["leadPrompt"],
    )
    files.append(PlannedFile(paths["leadPromptMeta"], meta.to_bytes()))

    if launch_plan is not None:
        entry = ResumeEntry.from_plan(launch_plan, leader.participant_ref, LEADER, cwd=root)
        # While the id is pending, the script calls this okstra back to find it.
        sheet, script = render_resume_sheet(
            [entry], run_dir=run_dir, okstra=find_okstra(environment)
        )
        files.append(PlannedFile(paths["resume"], sheet))
        files.append(PlannedFile(paths["resumeScript"], script.encode("utf-8"), mode=0o700))

    index_entries = [
        {
            "runId": run_id,
            "taskType": request.task_type,
            "roleExecutionRef": r.role_execution_ref,
            "participantRef": r.participant_ref,
            "role": r.role,
            "ordinal": r.ordinal,
            "modelRef": r.model_ref,
            "executionLabel": r.execution_label,
            "modelSpecDigest": r.model_spec_digest,
            "runManifestPath": rel["runManifest"],
        }
        for r in resolved.manifest.role_executions
    ]
    latest = {
        "runId": run_id,
        "taskType": request.task_type,
        "seq": seq,
        "createdAt": now,
        "runDir": _rel(run_dir, root),
        "runManifestPath": rel["runManifest"],
        "runInputsPath": rel["runInputs"],
        "leadPromptPath": rel["leadPrompt"],
        "leadSessionId": session_id,
    }
    task_manifest = runfiles.build_task_manifest(
        resolved.task_manifest.data if resolved.task_manifest is not None else None,
        identity={
            "projectId": resolved.project_id,
            "taskGroup": request.task_group,
            "taskId": request.task_id,
            "taskKey": request.task_key,
            "briefPath": brief_rel,
        },
        task_type=request.task_type,
        run=latest,
        index_entries=index_entries,
        now=now,
    )
    # Checked by its record before anything is written when it extends a file (a
    # manifest okstra could not read back is never left behind), unless that file is
    # exactly what okstra wrote; a new task's is made of okstra's own values.
    cache = user_dirs(environment.env).cache
    task_doc = (
        TaskManifest.parse(task_manifest, path=paths["taskManifest"])
        if _to_check(resolved.task_manifest, paths["taskManifest"], cache)
        else TaskManifest.from_own(task_manifest)
    )
    files.append(PlannedFile(paths["taskManifest"], task_doc.to_bytes()))

    workflow = task_manifest["workflow"]
    runs_seen: dict[str, dict[str, Any]] = {}
    for entry in task_manifest["roleExecutionIndex"]:
        if isinstance(entry, dict) and isinstance(entry.get("runId"), str):
            row = runs_seen.setdefault(
                entry["runId"],
                {"id": entry["runId"], "task_type": entry.get("taskType", ""), "team": []},
            )
            row["team"].append(str(entry.get("executionLabel", "")))
    index_md = render_template(
        "task-index.md.j2",
        {
            "task": {
                "key": request.task_key,
                "project_id": resolved.project_id,
                "brief_path": brief_rel,
            },
            "workflow": {
                "current_phase": workflow["currentPhase"],
                "current_phase_state": workflow["currentPhaseState"],
                "phase_states": workflow["phaseStates"],
                "last_completed_phase": workflow["lastCompletedPhase"] or "--",
                "next": workflow["nextRecommendedPhase"],
                "awaiting_approval": workflow["awaitingApproval"],
            },
            "latest": latest,
            "runs": list(runs_seen.values()),
            "updated_at": now,
        },
        environment.env,
    )
    files.append(PlannedFile(paths["taskIndex"], index_md.encode("utf-8")))

    event = RunPrepared(
        at=now,
        run_id=run_id,
        task_type=request.task_type,
        run_manifest_path=rel["runManifest"],
        lead_session_id=session_id,
        role_execution_refs=tuple(r.role_execution_ref for r in resolved.manifest.role_executions),
    )
    files.append(PlannedFile(paths["timeline"], event.jsonl(), "append"))

    project_json = runfiles.build_project_json(
        resolved.project_json.data if resolved.project_json is not None else None,
        project_id=resolved.project_id,
        project_root=root,
        task_key=request.task_key,
        run_id=run_id,
        task_type=request.task_type,
        now=now,
    )
    project_doc = (
        ProjectDocument.parse(project_json, path=project_json_path(root))
        if _to_check(resolved.project_json, project_json_path(root), cache)
        else ProjectDocument.from_own(project_json)
    )
    files.append(PlannedFile(project_json_path(root), project_doc.to_bytes(), "upsert"))
    central = RunsIndexRow(
        at=now,
        project_id=resolved.project_id,
        project_root=str(root),
        task_key=request.task_key,
        task_type=request.task_type,
        run_id=run_id,
        run_dir=str(run_dir),
        run_manifest_path=str(paths["runManifest"]),
        lead_session_id=session_id,
        okstra_version=__version__,
    )
    files.append(PlannedFile(user_dirs(environment.env).runs_index, central.jsonl(), "append"))
    return _RunPlan(
        run_id=run_id,
        run_dir=run_dir,
        files=tuple(files),
        launch_plan=launch_plan,
        lead_prompt_path=paths["leadPrompt"],
        run_manifest_path=paths["runManifest"],
    )


def rel_or(path: Path, root: Path) -> str:
    return _rel(path, root)


# --------------------------------------------------------------------------- the whole thing


def _preflight_error(failed: Sequence[PreflightResult]) -> PrepareError:
    lines = ["preflight failed:"] + [f"  {p.message()}" for p in failed]
    return PrepareError("\n".join(lines))


def _planned_result(
    resolved: Resolved,
    rp: _RunPlan,
    lp: LaunchPlan | None,
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
    tmux = tuple(tuple(c) for c in launcher.tmux_commands(lp, window, root, env)) if lp else ()
    return PrepareResult(
        dry_run=dry_run,
        run_id=rp.run_id,
        run_dir=rp.run_dir,
        files=rp.files,
        lead_argv=tuple(lp.argv) if lp else None,
        lead_env=dict(lp.env) if lp else {},
        tmux_commands=tmux,
        preflight=tuple(checks),
        backend=backend,
        manifest=resolved.manifest,
        lead_prompt_path=rp.lead_prompt_path,
        entry_mode=resolved.entry_mode,
        lead_session_id=lp.session_id if lp else None,
        resume_argv=lp.resume_argv() if lp else None,
        notes=tuple(notes),
    )


def prepare(
    request: RunRequest,
    *,
    launch: str = "auto",
    dry_run: bool = False,
    environment: Environment | None = None,
    on_step: StepCallback | None = None,
) -> PrepareResult:
    """Prepare (and launch) the run `request` describes — the core's one entry point.

    Front ends build the request: the app from its wizard's outcome, the CLI from a
    state file (`Wizard.outcome().request`) or from renderArgv
    (`roleargs.request_from_argv`). See the module docstring for the steps.

    Args:
        request: the run request.
        launch: "auto" | "tmux" | "exec" | "none".
        dry_run: do steps 1–4 and preflight, plan every file, write nothing.
        environment: the environment seam (defaults to the real one).
        on_step: called with a short description as each step starts.

    Raises:
        OkstraError: any refused input, before anything is written (steps 1–4,
            preflight), or a write failure.
    """
    env = environment or Environment.real()
    step = on_step or _noop
    if launch not in LAUNCH_CHOICES:
        raise UsageError(
            f"unknown launch backend {launch!r}: expected one of {', '.join(LAUNCH_CHOICES)}",
            field="--launch",
        )
    resolved = resolve_request(request, env, step)
    step("preflight")
    checks = run_preflight(resolved, env)
    failed = [p for p in checks if not p.ok]
    backend = launcher.choose_backend(launch, env) if resolved.spawns_leader else "none"
    window = f"{request.task_group}/{request.task_id}"
    root = request.project_root

    if dry_run:
        step("planning the run (dry run)")
        seq = runfiles.peek_next_sequence(resolved.task_root, request.task_type)
        notes = [p.message() for p in failed]
        prompt_file = run_dir_for(resolved, seq) / runfiles.LEAD_PROMPT
        try:
            lp = _plan_launch(resolved, prompt_file, env)
        except OkstraError as exc:
            # A dry run reports what is wrong instead of stopping at it.
            lp = None
            notes.append(exc.render())
        rp = plan_run(resolved, seq=seq, environment=env, launch_plan=lp)
        return _planned_result(
            resolved, rp, lp, checks, backend, window, env, dry_run=True, notes=notes
        )
    if failed:
        raise _preflight_error(failed)

    step("allocating the run sequence")
    troot = resolved.task_root
    # Again, right before the first write: a symlink may have appeared since step 1.
    check_write_targets(root, troot)
    make_private_dirs(troot, inside=root)
    with runfiles.task_lock(troot):
        seq, reserved = runfiles.allocate_run_dir(troot, request.task_type)
        with runfiles.reservation(reserved):
            # Re-read under the lock: another prepare may have extended the task since
            # the validation read (its index entries must be kept).
            resolved = replace(resolved, task_manifest=runfiles.read_task_manifest(troot))
            step("writing the run files")
            lp = _plan_launch(resolved, reserved / runfiles.LEAD_PROMPT, env)
            with project_lock(root):
                # project.json is shared by every task of the project: re-read it under
                # the project lock so a concurrent prepare of another task keeps its entry.
                resolved = replace(resolved, project_json=_read_project_json(root))
                rp = plan_run(resolved, seq=seq, environment=env, launch_plan=lp)
                runfiles.apply_run(rp.files, run_id=rp.run_id, run_dir=rp.run_dir)
    # After the locks: a marker names bytes, whoever writes the file next.
    _remember_shared(rp.files, root, troot, env)
    result = _planned_result(resolved, rp, lp, checks, backend, window, env, dry_run=False)
    if lp is None or backend == "none":
        return result
    step("launching the lead")
    outcome = launcher.start(lp, backend, window, root, env)
    result = _after_launch(result, rp, lp, outcome, env)
    return result


def _read_project_json(project_root: Path) -> runfiles.Existing | None:
    """project.json as it is now (unknown keys and all), or None when absent or empty."""
    found = runfiles.read_object(project_json_path(project_root), "project.json")
    return found if found is not None and found.data else None


def _to_check(existing: runfiles.Existing | None, path: Path, cache: Path) -> bool:
    """Whether the shared document prepare extends must be checked before it is written:
    it was read from `path` and its bytes are not exactly ones okstra wrote there."""
    return existing is not None and not trust.recognised(path, existing.raw, cache)


def _remember_shared(
    files: Sequence[PlannedFile], root: Path, troot: Path, env: Environment
) -> None:
    """Mark the task manifest and project.json prepare just wrote as okstra's own bytes."""
    shared = {troot / TASK_MANIFEST, project_json_path(root)}
    cache = user_dirs(env.env).cache
    for f in files:
        if f.path in shared:
            trust.remember(f.path, f.content, cache)


def _after_launch(
    result: PrepareResult,
    rp: _RunPlan,
    plan: LaunchPlan,
    outcome: LaunchResult,
    env: Environment,
) -> PrepareResult:
    """Record a launch: leader status, timeline event, resume sheet once the id is known."""
    now = env.now().isoformat(timespec="seconds")
    troot = rp.run_dir.parent.parent
    if outcome.error is not None:
        failed = LeadLaunchFailed(
            at=now, run_id=rp.run_id, backend=outcome.backend, error=outcome.error.render()
        )
        append_line(troot / runfiles.TIMELINE, failed.dump())
        # The run stays, its lead never ran: listed as `launch failed`, with why.
        runfiles.update_participant(
            rp.run_manifest_path,
            "participant-001",
            {
                "status": "launch-failed",
                "launchBackend": outcome.backend,
                "endDetail": outcome.error.render(),
            },
        )
        return replace(result, launch=outcome)
    runfiles.mark_leader_launched(
        rp.run_manifest_path,
        session_ref=outcome.session_id,
        window_ref=outcome.window_ref,
        backend=outcome.backend,
        now=now,
        # Exact, not rounded to the second: a later session lookup starts here.
        launched_at=outcome.launched_at.isoformat(),
        # Where okstra looks for the lead later (its exit status, attach, stop).
        extra=outcome.where() or None,
    )
    launched = LeadLaunched(
        at=now,
        run_id=rp.run_id,
        backend=outcome.backend,
        session_id=outcome.session_id,
        window_ref=outcome.window_ref,
        pane_ref=outcome.pane_ref,
        pending_discovery=outcome.pending_discovery,
    )
    append_line(troot / runfiles.TIMELINE, launched.dump())
    if outcome.session_id and outcome.session_id != plan.session_id:
        entry = ResumeEntry.from_plan(
            plan, "participant-001", LEADER, session_id=outcome.session_id, cwd=plan.project_root
        )
        write_resume_sheet(rp.run_dir, [entry], okstra=find_okstra(env))
    return replace(
        result,
        launch=outcome,
        lead_session_id=outcome.session_id or result.lead_session_id,
        resume_argv=plan.resume_argv(outcome.session_id) or result.resume_argv,
        exec_argv=tuple(outcome.exec_argv) if outcome.exec_argv else None,
        exec_env=outcome.exec_env,
    )
