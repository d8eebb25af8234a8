"""One builder per document of a run, each returning its record, from the `Resolved`
request and the run's `RunLayout`; and `plan_run`, the run's files (exact bytes).
"""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

from .. import __version__
from ..catalog.models import LEADER, RoleKind
from ..documents import trust
from ..documents.inputs import RunInputs
from ..documents.run import ApprovedPlanRef, FileRef, Participant, RunManifest
from ..documents.task import (
    LatestRun,
    ProjectDocument,
    RoleExecutionIndexEntry,
    RunPrepared,
    RunsIndexRow,
    TaskIdentity,
    TaskManifest,
)
from ..environment import Environment
from ..launch.plan import LaunchPlan
from ..launch.sheet import ResumeEntry, find_okstra, render_resume_sheet
from ..paths import user_dirs
from ..records import dataclass, fields_of, to_data
from ..tasks import (
    LEAD_PROMPT,
    LEAD_PROMPT_META,
    RUN_INPUTS,
    RUN_MANIFEST,
    TASK_INDEX,
    TASK_MANIFEST,
    TIMELINE,
)
from ..vocabulary import CURRENT_SESSION_RUNNER, LEAD_ASK
from . import runfiles
from .lead_prompt import (
    RunLayout,
    RunPaths,
    lead_prompt,
    lead_prompt_meta,
    relative,
    render_template,
)
from .resolve import Resolved, project_json_path
from .runfiles import PlannedFile


@dataclass(frozen=True)
class RunFiles:
    """Every file of one run (exact bytes), before writing."""

    run_id: str
    run_dir: Path
    files: tuple[PlannedFile, ...]
    lead_prompt_path: Path
    run_manifest_path: Path


def run_dir_for(resolved: Resolved, seq: int) -> Path:
    return resolved.task_root / "runs" / runfiles.run_name(resolved.request.task_type, seq)


def run_layout(
    resolved: Resolved, *, seq: int, now: str, launch_plan: LaunchPlan | None
) -> RunLayout:
    """The layout of run `seq` of the resolved request."""
    run_dir = run_dir_for(resolved, seq)
    troot = resolved.task_root
    paths = RunPaths(
        run_inputs=run_dir / RUN_INPUTS,
        run_manifest=run_dir / RUN_MANIFEST,
        lead_prompt=run_dir / LEAD_PROMPT,
        lead_prompt_meta=run_dir / LEAD_PROMPT_META,
        resume=run_dir / "resume.json",
        resume_script=run_dir / "resume-lead.sh",
        task_manifest=troot / TASK_MANIFEST,
        task_index=troot / TASK_INDEX,
        timeline=troot / TIMELINE,
    )
    root = resolved.request.project_root
    return RunLayout(
        run_id=runfiles.run_name(resolved.request.task_type, seq),
        seq=seq,
        run_dir=run_dir,
        project_root=root,
        now=now,
        session_id=launch_plan.session_id if launch_plan is not None else None,
        paths=paths,
        rel={name: relative(Path(path), root) for name, path in to_data(paths).items()},
        brief=relative(resolved.brief_path, root),
        mcp_tools=launch_plan is not None and launch_plan.gives_mcp,
    )


def run_inputs(resolved: Resolved, layout: RunLayout) -> RunInputs:
    """`run-inputs.json`: the request as prepared, with the resolved team and counts."""
    team = [
        (a.role, a.provider_id, None if a.binding.runner == CURRENT_SESSION_RUNNER else a.model_ref)
        for a in resolved.assignments
    ]
    # The counts of the roles a request may count, in the profile's order.
    counts = {
        r.role: sum(1 for a in resolved.assignments if a.role == r.role)
        for r in resolved.profile.roles
        if r.kind in (RoleKind.ADJUSTABLE, RoleKind.OPTIONAL)
    }
    return RunInputs.of(resolved.request, layout.run_id, team=team, counts=counts)


def run_manifest(
    resolved: Resolved, layout: RunLayout, launch_plan: LaunchPlan | None
) -> RunManifest:
    """`run-manifest.json`: who runs which role instance, on which model."""
    request, approved = resolved.request, resolved.approved_plan
    brief_sha = hashlib.sha256(resolved.brief_text.encode("utf-8")).hexdigest()
    return RunManifest(
        okstra_version=__version__,
        created_at=layout.now,
        **fields_of(layout, "run_id seq"),
        **fields_of(request, "task_type task_key task_group task_id"),
        **fields_of(resolved, "project_id entry_mode"),
        project_root=str(layout.project_root),
        host_runtime=resolved.host.id,
        lead_session_id=layout.session_id,
        lead_session_id_kind=launch_plan.session_id_kind if launch_plan else None,
        brief=FileRef(path=layout.brief, sha256=brief_sha),
        approved_plan=(
            ApprovedPlanRef(
                path=layout.relative(approved.path),
                sha256=approved.sha256,
                stages=tuple(s.stage for s in approved.stages),
            )
            if approved
            else None
        ),
        base_ref=resolved.base.ref if resolved.base else None,
        base_commit=resolved.base.commit if resolved.base else None,
        paths=layout.rel,
        participants=_with_lead_access(resolved),
        role_executions=resolved.manifest.role_executions,
        dynamic_roles=resolved.manifest.dynamic_roles,
    )


def _with_lead_access(resolved: Resolved) -> tuple[Participant, ...]:
    """The participants, the leader's carrying its access when it is more than `ask`."""
    participants = resolved.manifest.participants
    access = resolved.request.lead_access
    if access in (None, LEAD_ASK) or not resolved.spawns_leader:
        return participants
    return (dataclasses.replace(participants[0], lead_access=access), *participants[1:])


def resume_sheet(
    layout: RunLayout, launch_plan: LaunchPlan | None, environment: Environment
) -> tuple[bytes, str] | None:
    """`resume.json` and `resume-lead.sh` of a launched lead (None when none is)."""
    if launch_plan is None:
        return None
    entry = ResumeEntry.from_plan(launch_plan, "participant-001", LEADER, cwd=layout.project_root)
    # While the id is pending, the script calls this okstra back to find it.
    return render_resume_sheet([entry], run_dir=layout.run_dir, okstra=find_okstra(environment))


@dataclass(frozen=True)
class IndexRun:
    """One run as the task index lists it: its id, phase and team's labels."""

    id: str
    task_type: str
    team: list[str]


def task_manifest(resolved: Resolved, layout: RunLayout, cache: Path) -> TaskManifest:
    """`task-manifest.json` extended with this run, checked unless exactly okstra's bytes."""
    request, existing = resolved.request, resolved.task_manifest
    data = runfiles.build_task_manifest(
        existing.data if existing is not None else None,
        identity=TaskIdentity(
            project_id=resolved.project_id,
            brief_path=layout.brief,
            **fields_of(request, "task_group task_id task_key"),
        ),
        task_type=request.task_type,
        run=LatestRun(
            run_id=layout.run_id,
            task_type=request.task_type,
            seq=layout.seq,
            created_at=layout.now,
            run_dir=layout.relative(layout.run_dir),
            run_manifest_path=layout.run_manifest,
            run_inputs_path=layout.relative(layout.paths.run_inputs),
            lead_prompt_path=layout.relative(layout.paths.lead_prompt),
            lead_session_id=layout.session_id,
        ),
        index_entries=[
            RoleExecutionIndexEntry.of(
                r,
                run_id=layout.run_id,
                task_type=request.task_type,
                run_manifest_path=layout.run_manifest,
            )
            for r in resolved.manifest.role_executions
        ],
        now=layout.now,
    )
    path = layout.paths.task_manifest
    if _to_check(existing, path, cache):
        return TaskManifest.parse(data, path=path)
    return TaskManifest.from_own(data)


def task_index(
    resolved: Resolved, layout: RunLayout, manifest: TaskManifest, environment: Environment
) -> str:
    """`task-index.md`: the task manifest, for people."""
    workflow = manifest.workflow
    runs: dict[str, IndexRun] = {}
    for entry in manifest.role_execution_index:
        row = runs.setdefault(entry.run_id, IndexRun(entry.run_id, entry.task_type, []))
        row.team.append(entry.execution_label)
    context = {
        "task": {
            "key": resolved.request.task_key,
            "project_id": resolved.project_id,
            "brief_path": layout.brief,
        },
        "workflow": {
            "current_phase": workflow.current_phase,
            "current_phase_state": workflow.current_phase_state,
            "phase_states": workflow.phase_states,
            "last_completed_phase": workflow.last_completed_phase or "--",
            "next": workflow.next_recommended_phase,
            "awaiting_approval": workflow.awaiting_approval,
        },
        "latest": to_data(manifest.latest_run),
        "runs": list(runs.values()),
        "updated_at": layout.now,
    }
    return render_template("task-index.md.j2", context, environment.env)


def run_prepared(resolved: Resolved, layout: RunLayout) -> RunPrepared:
    """The timeline's `run-prepared` event."""
    return RunPrepared(
        at=layout.now,
        run_id=layout.run_id,
        task_type=resolved.request.task_type,
        run_manifest_path=layout.run_manifest,
        lead_session_id=layout.session_id,
        role_execution_refs=tuple(r.role_execution_ref for r in resolved.manifest.role_executions),
    )


def project_document(resolved: Resolved, layout: RunLayout, cache: Path) -> ProjectDocument:
    """`.okstra/project.json`, upserted (checked like the task manifest)."""
    request, existing = resolved.request, resolved.project_json
    data = runfiles.build_project_json(
        existing.data if existing is not None else None,
        project_id=resolved.project_id,
        project_root=layout.project_root,
        task_key=request.task_key,
        run_id=layout.run_id,
        task_type=request.task_type,
        now=layout.now,
    )
    path = project_json_path(layout.project_root)
    if _to_check(existing, path, cache):
        return ProjectDocument.parse(data, path=path)
    return ProjectDocument.from_own(data)


def runs_index_row(resolved: Resolved, layout: RunLayout) -> RunsIndexRow:
    """The central `runs.jsonl` row of this run."""
    request = resolved.request
    return RunsIndexRow(
        at=layout.now,
        project_id=resolved.project_id,
        project_root=str(layout.project_root),
        task_key=request.task_key,
        task_type=request.task_type,
        run_id=layout.run_id,
        run_dir=str(layout.run_dir),
        run_manifest_path=str(layout.paths.run_manifest),
        lead_session_id=layout.session_id,
        okstra_version=__version__,
        role_execution_refs=tuple(e.role_execution_ref for e in resolved.manifest.role_executions),
    )


def _to_check(existing: runfiles.Existing | None, path: Path, cache: Path) -> bool:
    """Whether the shared document extended was read and is not exactly okstra's bytes."""
    return existing is not None and not trust.recognised(path, existing.raw, cache)


def plan_run(
    resolved: Resolved, *, seq: int, environment: Environment, launch_plan: LaunchPlan | None
) -> RunFiles:
    """Every file of run `seq` (exact bytes, in the order written), from its documents."""
    now = environment.now().isoformat(timespec="seconds")
    layout = run_layout(resolved, seq=seq, now=now, launch_plan=launch_plan)
    paths = layout.paths
    cache = user_dirs(environment.env).cache
    prompt = lead_prompt(resolved, layout, environment).encode("utf-8")
    files = [
        PlannedFile(paths.run_inputs, run_inputs(resolved, layout).to_bytes(), "immutable"),
        PlannedFile(paths.run_manifest, run_manifest(resolved, layout, launch_plan).to_bytes()),
        PlannedFile(paths.lead_prompt, prompt),
        PlannedFile(paths.lead_prompt_meta, lead_prompt_meta(resolved, layout, prompt).to_bytes()),
    ]
    if launch_plan is not None and launch_plan.mcp_config is not None:
        # The lead's CLI reads okstra's MCP server from it (`launch.mcp`).
        config = launch_plan.mcp_config_bytes or b""
        files.append(PlannedFile(launch_plan.mcp_config, config))
    sheet = resume_sheet(layout, launch_plan, environment)
    if sheet is not None:
        files.append(PlannedFile(paths.resume, sheet[0]))
        files.append(PlannedFile(paths.resume_script, sheet[1].encode("utf-8"), mode=0o700))
    manifest = task_manifest(resolved, layout, cache)
    index = task_index(resolved, layout, manifest, environment)
    project = project_document(resolved, layout, cache)
    files += [
        PlannedFile(paths.task_manifest, manifest.to_bytes()),
        PlannedFile(paths.task_index, index.encode("utf-8")),
        PlannedFile(paths.timeline, run_prepared(resolved, layout).jsonl(), "append"),
        PlannedFile(project_json_path(layout.project_root), project.to_bytes(), "upsert"),
        PlannedFile(
            user_dirs(environment.env).runs_index,
            runs_index_row(resolved, layout).jsonl(),
            "append",
        ),
    ]
    return RunFiles(
        run_id=layout.run_id,
        run_dir=layout.run_dir,
        files=tuple(files),
        lead_prompt_path=paths.lead_prompt,
        run_manifest_path=paths.run_manifest,
    )
