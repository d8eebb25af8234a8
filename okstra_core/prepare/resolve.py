"""Steps 1–4 of prepare: validate the request, resolve the team, build the manifest.

They only read: a problem raises before anything is written. `Resolved` is what they
decide, everything the run's documents are built from (`run_documents`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .. import launch as launcher  # its process-running parts load on first use
from ..catalog.loaders import detect_host, load_catalog, load_project_config
from ..catalog.models import LEADER, EntryMode, HostSpec, Profile, ProviderSpec
from ..defaults import fallback_notes, load_scopes
from ..environment import Environment
from ..errors import FileSystemError, PrepareError, UsageError
from ..launch.plan import lead_access_argv
from ..plans import ApprovedPlan, check_approved_plan, check_brief
from ..pool import ModelPool
from ..records import dataclass
from ..request import RunRequest
from ..resolver import ResolvedAssignment, check_entry_mode, resolve_assignments
from ..runbase import RunBase, resolve_base
from ..store import MAX_FILE_BYTES, FileLock, check_no_links, decode_utf8, lock_path_for, read_bytes
from ..tasks import OKSTRA_DIR, TASK_INDEX, TASK_MANIFEST, TIMELINE, slugify, task_root
from ..vocabulary import CURRENT_SESSION, LEAD_ASK
from . import runfiles
from .manifest import ExecutionManifest, build_execution_manifest

if TYPE_CHECKING:
    from ..catalog.loaders import Catalog
    from ..launch import PreflightResult

PROJECT_JSON = "project.json"
StepCallback = Callable[[str], None]


def noop_step(_: str) -> None:
    return None


@dataclass(frozen=True)
class Resolved:
    """The outcome of steps 1–4: everything needed to plan the run's files."""

    request: RunRequest
    catalog: Catalog
    profile: Profile
    host: HostSpec
    entry_mode: str
    assignments: tuple[ResolvedAssignment, ...]
    manifest: ExecutionManifest
    brief_path: Path
    brief_text: str
    approved_plan: ApprovedPlan | None
    task_root: Path
    project_id: str
    # As read (decoded, and the exact bytes); None when absent (or project.json empty).
    project_json: runfiles.Existing | None
    task_manifest: runfiles.Existing | None
    # What reading the model defaults left out, and the earlier-config note.
    config_notes: tuple[str, ...] = ()
    # The run's base (`--base-ref`, resolved): where its writers branch from.
    base: RunBase | None = None

    @property
    def leader_provider(self) -> ProviderSpec:
        return self.catalog.provider(self.manifest.leader.provider)

    @property
    def spawns_leader(self) -> bool:
        return self.entry_mode != "current-session"


def project_json_path(project_root: Path) -> Path:
    """`<project>/.okstra/project.json`."""
    return project_root / OKSTRA_DIR / PROJECT_JSON


def project_lock(project_root: Path) -> FileLock:
    """The project-wide lock under which `.okstra/project.json` is re-read and upserted
    (always taken after a task lock, never before: the two cannot deadlock)."""
    return FileLock(project_json_path(project_root), timeout=runfiles.SEQUENCE_LOCK_TIMEOUT)


def check_write_targets(project_root: Path, troot: Path) -> None:
    """Refuse a task whose files would be written through a link or into a special file.

    Nothing below the project root on the way to the task's `runs` directory or any file
    prepare writes may be a symbolic link, a file where a directory goes, or a FIFO,
    device or socket where a file goes (PrepareError naming the path).
    """
    runs = troot / "runs"
    timeline = troot / TIMELINE
    project_json = project_json_path(project_root)
    targets = (
        runs,
        lock_path_for(runs),
        troot / TASK_MANIFEST,
        troot / TASK_INDEX,
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


def resolve_request(
    request: RunRequest, environment: Environment, on_step: StepCallback = noop_step
) -> Resolved:
    """Steps 1–4 (read only): validate the files, resolve the team, build the manifest."""
    on_step("validating inputs")
    root = request.project_root
    if not root.is_dir():
        raise PrepareError(f"project root is not a directory: {root}", field="--project-root")
    troot = task_root(root, request.task_group, request.task_id)
    # Before anything under .okstra is read: a symlinked .okstra must not even be read.
    check_write_targets(root, troot)
    brief_path = check_brief(root, request.brief)
    # A regular UTF-8 file (never a FIFO or device), size-capped.
    data = read_bytes(brief_path, what="the brief", error=PrepareError, limit=MAX_FILE_BYTES)
    brief_text = decode_utf8(data, brief_path, error=PrepareError)
    catalog = load_catalog(environment)
    profile = catalog.profile(request.task_type)
    approved = _approved_plan(request, profile, catalog, troot, on_step)
    base = _base(request, profile, catalog, troot, environment, on_step)
    context = request.host
    host = catalog.host(context.host_id) if context.host_id else detect_host(environment, catalog)
    entry_mode: EntryMode = context.entry_mode
    check_entry_mode(host, entry_mode)
    project_config = load_project_config(root)
    task_manifest = runfiles.read_task_manifest(troot)

    on_step("resolving the team")
    pool = ModelPool.from_catalog(catalog, environment)
    scopes = load_scopes(root, catalog, environment.env)
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

    _check_lead_access(request, catalog, plan.assignments, entry_mode)

    on_step("building the execution manifest")
    manifest = build_execution_manifest(
        plan.assignments,
        plan.dynamic_roles,
        leader_model_reported=context.model_ref is not None,
        writing_roles={r.role for r in profile.roles if r.writes},
    )
    project_id = project_id_of(root, project_config.project_id)
    notes = (*scopes.notes, *fallback_notes(plan.assignments, pool, host, entry_mode))
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
        config_notes=notes,
        base=base,
    )


def _approved_plan(
    request: RunRequest, profile: Profile, catalog: Catalog, troot: Path, on_step: StepCallback
) -> ApprovedPlan | None:
    """The approved plan of a phase that needs one; refused when given to another."""
    if profile.needs_approved_plan:
        on_step("checking the approved plan")
        return check_approved_plan(
            request.approved_plan, project_root=request.project_root, task_root=troot
        )
    if request.approved_plan:
        needing = sorted(t for t, p in catalog.profiles.items() if p.needs_approved_plan)
        raise UsageError(
            f"--approved-plan applies only to {', '.join(needing) or 'no task type'}",
            field="--approved-plan",
        )
    return None


def _check_lead_access(
    request: RunRequest,
    catalog: Catalog,
    assignments: Sequence[ResolvedAssignment],
    entry_mode: str,
) -> None:
    """`--lead-access`: for a lead okstra starts, at a level its provider declares."""
    access = request.lead_access or LEAD_ASK
    if access == LEAD_ASK:
        return
    if entry_mode == CURRENT_SESSION:
        raise UsageError(
            "--lead-access applies to a lead okstra starts: in current-session mode the "
            "host session leads with its own permissions",
            field="--lead-access",
        )
    leader = next(a for a in assignments if a.role == LEADER)
    lead_access_argv(catalog.provider(leader.provider_id), access)


def _base(
    request: RunRequest,
    profile: Profile,
    catalog: Catalog,
    troot: Path,
    environment: Environment,
    on_step: StepCallback,
) -> RunBase | None:
    """The run's base, resolved to a commit (None when none was given); UsageError naming
    `--base-ref` for a phase whose roles do not write, or a base naming no commit."""
    if not request.base_ref:
        return None
    if not any(r.writes for r in profile.roles):
        writing = sorted(t for t, p in catalog.profiles.items() if any(r.writes for r in p.roles))
        raise UsageError(
            f"--base-ref applies only to phases whose roles write "
            f"({', '.join(writing) or 'none'}); no role of {profile.task_type} writes",
            field="--base-ref",
        )
    on_step("resolving the base")
    return resolve_base(request.project_root, troot, request.base_ref, environment.env)


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


def project_id_of(root: Path, configured: str | None = None) -> str:
    """The project's id: project.json's (`configured`, if read), else its directory's slug."""
    if configured is None:
        configured = load_project_config(root).project_id
    return configured or slugify(root.name) or "project"
