"""What one `okstra worker start` would run, decided before anything changes.

`plan_start` reads the run manifest and the catalog and either returns a `StartPlan`
— the role execution (an existing one, a new attempt of one, or a new execution of a
dynamic role), its provider and model, whether it writes, and the argv — or refuses
with a `UsageError` (exit 2) naming what is wrong. It is called twice: once before
the run's lock is taken (a refusal then leaves no trace, not even a lock file), and
again under the lock, where the manifest may have changed (another start).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ...binding import Binding, bind
from ...catalog import Catalog, ProviderSpec
from ...documents import RunManifest
from ...environment import Environment
from ...errors import OkstraError, UsageError
from ...pool import ModelPool
from ...prepare.manifest import (
    binding_record,
    execution_label,
    model_spec_digest,
    role_execution_ref,
)
from ...records import dataclass
from .record import ENDED, RUNNING
from .team import WHO_ARG, Member, find, members

# Participant keys that belong to one launch, never copied to a new attempt.
_LAUNCH_KEYS = (
    "sessionRef",
    "windowRef",
    "launchBackend",
    "launchedAt",
    "paneRef",
    "tmuxSocket",
    "processId",
    "processStart",
    "parentProcessId",
    "parentStart",
    "stopRequestedAt",
    "exitStatus",
    "exitSignal",
    "exitedAt",
    "endDetail",
    "processGroup",
    "outputLog",
)
# Role execution keys of one start's worktree and its fate, never copied either.
_TREE_KEYS = (
    "worktreePath",
    "branch",
    "baseCommit",
    "treeNote",
    "mergedAt",
    "mergeCommit",
    "mergedInto",
    "discardedAt",
)
WRITE = "workspace-write"
READ_ONLY = "read-only"


@dataclass(frozen=True)
class StartRequest:
    """What the caller asked for.

    Attributes:
        who: the role execution (ref, label, `<role>#<n>`); None with `role`.
        again: start a new attempt of `who` (a new role execution of its role).
        role / model: a dynamic role to start on a model (`--role R --model M`).
        source: the role execution a dynamic role comes from (default: the lead's).
        shared_tree: a writer runs in the project's own tree, not a worktree of its own.
    """

    who: str | None = None
    again: bool = False
    role: str | None = None
    model: str | None = None
    source: str | None = None
    shared_tree: bool = False


@dataclass(frozen=True)
class StartPlan:
    """Who starts, on what: decided, nothing changed yet.

    Attributes:
        member: the role execution (for a new one, as it will be recorded).
        added: the participant and role execution to add (None: an existing one).
        source_ref: the role execution a new one comes from.
        provider: the provider spec of its model.
        model_value: the value given to the CLI's model flag.
        writes: whether it may change the project.
        cli: the CLI's path on PATH.
        shared_tree: a writer runs in the project's tree (`--shared-tree`).
        worktrees_dir: the `worktrees.dir` setting (None: the default place).
    """

    member: Member
    added: Mapping[str, Any] | None
    source_ref: str | None
    provider: ProviderSpec
    model_value: str
    writes: bool
    cli: str
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


def _new_member(added: Mapping[str, Any]) -> Member:
    (member,) = members(
        {"participants": [added["participant"]], "roleExecutions": [added["roleExecution"]]}
    )
    return member


def _again(manifest: RunManifest, source: Member) -> dict[str, Any]:
    """A new attempt of `source`: the same role, model and binding, the next ordinal."""
    ordinal = _next_ordinal(manifest, source.role)
    participant_ref = _next_participant(manifest)
    participant = {k: v for k, v in source.participant.items() if k not in _LAUNCH_KEYS}
    participant.update(participantRef=participant_ref, status="prepared")
    execution = {k: v for k, v in source.execution.items() if k not in _TREE_KEYS}
    execution.update(
        roleExecutionRef=role_execution_ref(source.role, ordinal),
        participantRef=participant_ref,
        ordinal=ordinal,
        executionLabel=execution_label(source.role, ordinal, source.model_ref or "?"),
        status="prepared",
        sourceRoleExecutionRef=source.ref,
    )
    return {"participant": participant, "roleExecution": execution}


@dataclass(frozen=True)
class _Assignment:
    """A dynamic role's binding, in the shape the manifest's digest reads."""

    role: str
    ordinal: int
    duty: str
    provider_id: str
    model_ref: str
    model_id: str
    display_name: str
    execution: str
    binding: Binding
    host_runtime: str
    entry_mode: str
    provenance: str = "dynamic"


def _dynamic(
    manifest: RunManifest, request: StartRequest, catalog: Catalog, environment: Environment
) -> dict[str, Any]:
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
    ordinal = _next_ordinal(manifest, role)
    assignment = _Assignment(
        role=role,
        ordinal=ordinal,
        duty=declared[role].duty,
        provider_id=model.provider_id,
        model_ref=model.ref,
        model_id=model.model_id,
        display_name=model.display,
        execution=model.execution,
        binding=binding,
        host_runtime=host.id,
        entry_mode=manifest.entry_mode,
    )
    participant_ref = _next_participant(manifest)
    capability = declared[role].worker_write_capability or (
        WRITE if _profile_writes(catalog, manifest.task_type, role) else READ_ONLY
    )
    source = request.source or manifest.leader.role_execution_ref
    participant = {
        "participantRef": participant_ref,
        "role": role,
        "provider": model.provider_id,
        "modelRef": model.ref,
        "modelId": model.model_id,
        "runner": binding.runner,
        "hostRuntime": host.id,
        "hostModelValue": binding.host_model_value,
        "entryMode": manifest.entry_mode,
        "status": "prepared",
        "workerWriteCapability": capability,
    }
    execution = {
        "roleExecutionRef": role_execution_ref(role, ordinal),
        "participantRef": participant_ref,
        "role": role,
        "dutyId": assignment.duty,
        "provider": model.provider_id,
        "modelRef": model.ref,
        "modelId": model.model_id,
        "displayName": model.display,
        "execution": model.execution,
        "ordinal": ordinal,
        "executionLabel": execution_label(role, ordinal, model.ref),
        "modelSpecDigest": model_spec_digest(assignment),
        "binding": binding_record(binding, model.execution).dump(),
        "provenance": assignment.provenance,
        "status": "prepared",
        "sourceRoleExecutionRef": source,
    }
    return {"participant": participant, "roleExecution": execution}


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
    recorded = member.participant.get("workerWriteCapability")
    if recorded in (WRITE, READ_ONLY):
        return bool(recorded == WRITE)
    return _profile_writes(catalog, task_type, member.role)


def plan_start(
    manifest: RunManifest,
    request: StartRequest,
    catalog: Catalog,
    environment: Environment,
) -> StartPlan:
    """Decide what `request` starts in the run of `manifest`.

    Raises:
        UsageError: an unknown `<who>`, the lead, a worker already running (or already
            ended, without `--again`), a dynamic role or model that does not fit, a
            provider that cannot run workers, a role execution okstra does not run (a
            native sub-session of the host), or a CLI missing from PATH.
    """
    team = members(manifest.dump())
    added: dict[str, Any] | None = None
    source_ref: str | None = None
    if request.role is not None:
        if request.who is not None or request.model is None:
            raise UsageError("--role needs --model, and no <who>", field="--role")
        if request.source is not None:
            find(team, request.source)
        added = _dynamic(manifest, request, catalog, environment)
        member = _new_member(added)
        source_ref = str(added["roleExecution"]["sourceRoleExecutionRef"])
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
            member = _new_member(added)
    plan = _checked(member, added, source_ref, manifest, catalog, environment)
    return replace(
        plan, shared_tree=request.shared_tree, worktrees_dir=catalog.config.worktrees_dir
    )


def _checked(
    member: Member,
    added: Mapping[str, Any] | None,
    source_ref: str | None,
    manifest: RunManifest,
    catalog: Catalog,
    environment: Environment,
) -> StartPlan:
    binding = member.execution.get("binding")
    runner = binding.get("runner") if isinstance(binding, Mapping) else None
    if runner not in (None, "cli-wrapper"):
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
    value = binding.get("executionValue") if isinstance(binding, Mapping) else None
    model_value = value if isinstance(value, str) and value else member.execution.get("execution")
    if not isinstance(model_value, str) or not model_value:
        raise UsageError(f"{member.short} has no bound model to start", field=WHO_ARG)
    return StartPlan(
        member=member,
        added=added,
        source_ref=source_ref,
        provider=provider,
        model_value=model_value,
        writes=_writes(member, catalog, manifest.task_type),
        cli=cli,
    )


def plan_follow_up(
    manifest: RunManifest, who: str, catalog: Catalog, environment: Environment
) -> tuple[StartPlan, str]:
    """Decide a follow-up turn of the ended worker `who` (`okstra worker send`):
    (its plan, the session id it continues).

    Raises:
        UsageError: an unknown `<who>` or the lead, a worker never started or still
            running, a provider without `[launch] worker_resume`, a CLI missing from
            PATH, or a session id nobody knows.
    """
    member = find(members(manifest.dump()), who)
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
    session = member.get_str("sessionRef")
    if session is None:
        raise UsageError(
            f"{member.short}: its session id is not known (its CLI did not say it), so its "
            "conversation cannot be continued; start another attempt with --again",
            field=WHO_ARG,
        )
    return replace(plan, worktrees_dir=catalog.config.worktrees_dir), session
