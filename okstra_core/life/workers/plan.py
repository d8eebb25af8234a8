"""What one `okstra worker start` would run, decided before anything changes.

`plan_start` returns a `StartPlan` (an existing role execution, a new attempt, or a
dynamic role's new one as `AddedExecution`; provider, model, write access, CLI) or
raises a `UsageError`. It runs before the run's lock (a refusal leaves no trace) and
again under it only when the manifest changed meanwhile.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ...binding import bind
from ...catalog import Catalog, ProviderSpec
from ...catalog.settings import TeamSettings
from ...documents.run import AddedExecution, RunManifest, WriteCapability
from ...environment import Environment
from ...errors import OkstraError, UsageError
from ...pool import ModelPool
from ...prepare.manifest import bound_execution, execution_label, role_execution_ref
from ...records import dataclass, fields_of
from ...resolver import ResolvedAssignment
from .record import ENDED, RUNNING
from .team import WHO_ARG, Member, find, members

WRITE: WriteCapability = "workspace-write"
READ_ONLY: WriteCapability = "read-only"
DYNAMIC_PROVENANCE = "dynamic"


@dataclass(frozen=True)
class StartRequest:
    """What the caller asked for: a worker `who` (a new attempt with `again`), or a dynamic
    `role` on `model` from `source` (default: the lead); `shared_tree`: no own worktree."""

    who: str | None = None
    again: bool = False
    role: str | None = None
    model: str | None = None
    source: str | None = None
    shared_tree: bool = False


@dataclass(frozen=True)
class StartPlan:
    """Who starts, on what (nothing changed yet): `added` holds a new role execution's
    records, `model_value` goes to the CLI's model flag, `cli` is its path on PATH, `team`
    the team settings."""

    member: Member
    added: AddedExecution | None
    source_ref: str | None
    provider: ProviderSpec
    model_value: str
    writes: bool
    cli: str
    team: TeamSettings
    shared_tree: bool = False
    worktrees_dir: str | None = None


def _next_ordinal(manifest: RunManifest, role: str) -> int:
    return max((e.ordinal for e in manifest.role_executions if e.role == role), default=0) + 1


def _next_participant(manifest: RunManifest) -> str:
    numbers = [
        int(p.participant_ref.rsplit("-", 1)[1])
        for p in manifest.participants
        if p.participant_ref.rsplit("-", 1)[-1].isdigit()
    ]
    return f"participant-{max(numbers, default=0) + 1:03d}"


def _again(manifest: RunManifest, source: Member) -> AddedExecution:
    """A new attempt of `source`: the same role, model and binding, the next ordinal."""
    ordinal = _next_ordinal(manifest, source.role)
    participant_ref = _next_participant(manifest)
    execution = source.execution.new_attempt(
        role_execution_ref(source.role, ordinal),
        participant_ref,
        ordinal=ordinal,
        label=execution_label(source.role, ordinal, source.model_ref or "?"),
    )
    return AddedExecution(
        participant=source.participant.new_attempt(participant_ref), role_execution=execution
    )


def _dynamic(
    manifest: RunManifest, request: StartRequest, catalog: Catalog, environment: Environment
) -> AddedExecution:
    role, wanted = request.role or "", request.model or ""
    declared = {d.role: d for d in manifest.dynamic_roles}
    if role not in declared:
        known = ", ".join(declared) or "none"
        raise UsageError(
            f"{role!r} is not a dynamic role of this run (its dynamic roles: {known}); "
            "start a role execution of the team by its name instead",
            field="--role",
        )
    pool = ModelPool.from_catalog(catalog, environment)
    model = pool.lookup(wanted)
    host = catalog.host(manifest.host_runtime)
    entry_mode: Any = manifest.entry_mode
    verdict = pool.availability(model.ref, role, host, entry_mode)
    if not verdict.available:
        raise UsageError(f"{model.ref} cannot run {role}: {verdict.reason}", field="--model")
    try:
        binding = bind(model, role, host, entry_mode)
    except OkstraError as exc:
        raise UsageError(exc.message, field="--model") from None
    assignment = ResolvedAssignment(
        role=role,
        ordinal=_next_ordinal(manifest, role),
        duty=declared[role].duty,
        **fields_of(model, "provider_id model_id execution"),
        model_ref=model.ref,
        display_name=model.display,
        binding=binding,
        host_runtime=host.id,
        entry_mode=manifest.entry_mode,
        provenance=DYNAMIC_PROVENANCE,
    )
    capability = declared[role].worker_write_capability or (
        WRITE if _profile_writes(catalog, manifest.task_type, role) else READ_ONLY
    )
    participant, execution = bound_execution(
        assignment, _next_participant(manifest), write_capability=capability
    )
    source = request.source or manifest.leader.role_execution_ref
    return AddedExecution(
        participant=participant, role_execution=replace(execution, source_role_execution_ref=source)
    )


def _state_refusal(member: Member, again: bool) -> str | None:
    if again:
        return None
    if member.status == RUNNING:
        return (
            f"{member.short} is already running; wait for it (`okstra worker wait`), stop "
            "it, or start another attempt with --again"
        )
    if member.status in ENDED:
        return f"{member.short} already ran ({member.status}); start another attempt with --again"
    return None


def _profile_writes(catalog: Catalog, task_type: str, role: str) -> bool:
    profile = catalog.profiles.get(task_type)
    if profile is None:
        return False
    return any(r.role == role and r.writes for r in profile.roles)


def _writes(member: Member, catalog: Catalog, task_type: str) -> bool:
    """The participant's recorded capability; the profile's word for an older manifest."""
    recorded = member.participant.worker_write_capability
    if recorded is not None:
        return recorded == WRITE
    return _profile_writes(catalog, task_type, member.role)


def plan_start(
    manifest: RunManifest, request: StartRequest, catalog: Catalog, environment: Environment
) -> StartPlan:
    """Decide what `request` starts in the run of `manifest`; UsageError for an unknown
    `<who>` or the lead, a worker running or ended (without `--again`), a dynamic role or
    model that does not fit, a provider or runner okstra cannot start, or no CLI on PATH."""
    team = members(manifest)
    added: AddedExecution | None = None
    source_ref: str | None = None
    if request.role is not None:
        if request.who is not None or request.model is None:
            raise UsageError("--role needs --model, and no <who>", field="--role")
        if request.source is not None:
            find(team, request.source)
        added = _dynamic(manifest, request, catalog, environment)
        member = Member(added.role_execution, added.participant)
        source_ref = added.role_execution.source_role_execution_ref
    else:
        if request.who is None:
            raise UsageError("expected the worker to start (or --role and --model)", field=WHO_ARG)
        member = find(team, request.who)
        refusal = _state_refusal(member, request.again)
        if refusal is not None:
            raise UsageError(refusal, field=WHO_ARG)
        if request.again:
            source_ref = member.ref
            added = _again(manifest, member)
            member = Member(added.role_execution, added.participant)
    plan = _checked(member, added, source_ref, manifest, catalog, environment)
    return replace(plan, shared_tree=request.shared_tree)


def _checked(
    member: Member,
    added: AddedExecution | None,
    source_ref: str | None,
    manifest: RunManifest,
    catalog: Catalog,
    environment: Environment,
) -> StartPlan:
    binding = member.execution.binding
    runner = binding.runner
    if runner != "cli-wrapper":
        raise UsageError(
            f"{member.short} runs as a {runner} of the host, which the lead starts itself; "
            "okstra starts only workers that run through their provider's CLI",
            field=WHO_ARG,
        )
    provider = catalog.provider(member.provider)
    refusal = provider.worker_refusal()
    if refusal is not None:
        raise UsageError(f"{member.short}: {refusal} ({provider.source})", field=WHO_ARG)
    cli = environment.which(provider.cli)
    if cli is None:
        hint = provider.install or "install it, or put it on PATH"
        raise UsageError(
            f"{member.short}: the {provider.id} CLI {provider.cli!r} is not on PATH ({hint})",
            field=WHO_ARG,
        )
    model_value = binding.execution_value or member.execution.execution
    if not model_value:
        raise UsageError(f"{member.short} has no bound model to start", field=WHO_ARG)
    return StartPlan(
        member=member,
        added=added,
        source_ref=source_ref,
        provider=provider,
        model_value=model_value,
        writes=_writes(member, catalog, manifest.task_type),
        cli=cli,
        team=catalog.config.team,
        worktrees_dir=catalog.config.worktrees_dir,
    )


def plan_follow_up(
    manifest: RunManifest, who: str, catalog: Catalog, environment: Environment
) -> tuple[StartPlan, str]:
    """(plan, session id) of a follow-up turn of the ended worker `who`; UsageError when
    unknown, the lead, never started, running, no `worker_resume`, no CLI or no session id."""
    member = find(members(manifest), who)
    if member.status == RUNNING:
        raise UsageError(
            f"{member.short} is still running; wait for it (`okstra worker wait`) and send "
            "it the follow-up then",
            field=WHO_ARG,
        )
    if member.status not in ENDED:
        raise UsageError(
            f"{member.short} was never started: start it (`okstra worker start`)", field=WHO_ARG
        )
    plan = _checked(member, None, None, manifest, catalog, environment)
    if plan.provider.launch.worker_resume is None:
        raise UsageError(
            f"{member.short}: provider {plan.provider.id!r} declares no [launch] "
            f"worker_resume: its workers cannot be sent a follow-up ({plan.provider.source}); "
            "start another attempt with --again",
            field=WHO_ARG,
        )
    session = member.participant.session_ref
    if not session:
        raise UsageError(
            f"{member.short}: its session id is not known (its CLI did not say it), so its "
            "conversation cannot be continued; start another attempt with --again",
            field=WHO_ARG,
        )
    return plan, session
