"""The role selection of an earlier okstra's state file, as this okstra's role steps.

A v1 file chose its team with per-provider fields (a worker roster, a lead, a report
writer, an executor, a critic); the earlier v2 shape kept `roleCounts`/`roleModels`.
Either becomes `RoleChoices`, kept only where this okstra's profile still allows it,
laid out as role step answers in the asking order (`selection_order`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..catalog.models import LEADER, Profile, RoleKind, RoleRequirement
from ..errors import StateFileError, UsageError
from ..records import dataclass, field
from ..vocabulary import CURRENT_SESSION, EARLIER_DEFAULT_PROVIDER, SPAWN_PROCESS
from ..wizard.ids import LEADER_SESSION, LEADER_SESSION_ANSWER, count_step, model_step
from ..wizard.state import V2_ROLE_FIELDS
from .lookup import CRITIC_OFF, CROSS_VERIFICATION_ROLES, default_candidates, legacy_model
from .shapes import V1_ROSTER_FIELDS, SourceReader

if TYPE_CHECKING:
    from ..defaults import DefaultScopes
    from ..pool import ModelPool, PoolModel

# v1's per-provider model fields belonged to the executor in implementation: its
# verifiers get the role's default candidates, never those values.
_ROSTERLESS_TASK_TYPES = frozenset({"implementation"})
# The v1 steps that asked for the critic.
_CRITIC_STEPS = ("critic_pick", "critic_text")


@dataclass
class RoleChoices:
    """The role selection taken over, before it is laid out as answered steps.

    `provenance`: per step id, a provenance other than the conversion's own (a model
    taken from the default candidates keeps its `default:<scope>`).
    """

    counts: dict[str, int] = field(default_factory=dict)
    models: dict[str, list[str]] = field(default_factory=dict)
    provenance: dict[str, str] = field(default_factory=dict)

    def set_count(self, requirement: RoleRequirement, wanted: int) -> int:
        """Record a count for an adjustable/optional role; return the effective count."""
        count = max(requirement.min, min(requirement.max, wanted))
        if requirement.kind in (RoleKind.ADJUSTABLE, RoleKind.OPTIONAL):
            self.counts[requirement.role] = count
        return count

    def set_models(self, role: str, refs: Iterable[str]) -> None:
        refs = list(refs)
        if refs:
            self.models[role] = refs


def _clamped_prefix(
    pool: ModelPool,
    scopes: DefaultScopes,
    role: str,
    providers: list[str],
    model_for: Callable[[str], str],
) -> list[str]:
    """Models for ordinals 1.. of `role`, stopping at the first that cannot be kept (the
    engine refuses ordinal n before n-1, and asks again from there)."""
    refs: list[str] = []
    for provider_id in providers:
        model = legacy_model(pool, scopes, provider_id, role, model_for(provider_id))
        if model is None or model.ref in refs:
            break
        refs.append(model.ref)
    return refs


def _cross_from_defaults(
    choices: RoleChoices,
    cross: RoleRequirement,
    count: int,
    pool: ModelPool,
    scopes: DefaultScopes,
    model_for: Callable[[str], str] | None,
) -> None:
    """Instance n of the first cross-verification role takes default candidate n (its
    provider's v1 value instead, with `model_for`); a logged-out CLI's candidate goes last."""
    refs: list[str] = []
    candidates = sorted(
        default_candidates(pool, scopes, cross.role),
        key=lambda c: pool.readiness(c[0].provider).logged_in is False,
    )
    for ordinal, (candidate, provenance) in enumerate(candidates[:count], start=1):
        model: PoolModel | None = candidate
        value = model_for(candidate.provider_id) if model_for is not None else ""
        if value:
            model = legacy_model(pool, scopes, candidate.provider_id, cross.role, value)
            provenance = ""
        if model is None or model.ref in refs:
            break
        refs.append(model.ref)
        if provenance:
            choices.provenance[model_step(cross.role, ordinal)] = provenance
    choices.set_models(cross.role, refs)


def _cross_roster(
    choices: RoleChoices,
    reader: SourceReader,
    profile: Profile,
    pool: ModelPool,
    scopes: DefaultScopes,
    task_type: str,
) -> None:
    """The first cross-verification role: the v1 worker roster, or else (as the earlier
    okstra did) the role's default candidates at the recommended count."""
    cross = next((r for r in profile.static_roles if r.role in CROSS_VERIFICATION_ROLES), None)
    if cross is None:
        return
    rosterless = task_type in _ROSTERLESS_TASK_TYPES
    roster = [] if rosterless else reader.roster(*V1_ROSTER_FIELDS)
    if roster:
        count = choices.set_count(cross, len(roster))
        refs = _clamped_prefix(pool, scopes, cross.role, roster[:count], reader.provider_model)
        choices.set_models(cross.role, refs)
    else:
        count = choices.set_count(cross, cross.recommended_count)
        model_for = None if rosterless else reader.provider_model
        _cross_from_defaults(choices, cross, count, pool, scopes, model_for)


def _singles(
    reader: SourceReader, entry_mode: str, home_provider: str
) -> list[tuple[str, str, str]]:
    """(role, provider, model value) of the lead (no provider: the host's own), the
    report writer (no provider: claude on every host) and the executor."""
    singles: list[tuple[str, str, str]] = []
    if entry_mode == SPAWN_PROCESS:
        lead_provider = reader.string("lead_provider", "leadProvider").lower()
        singles.append(
            (LEADER, lead_provider or home_provider, reader.string("lead_model", "leadModel"))
        )
    rw_provider = reader.string("report_writer_provider", "reportWriterProvider").lower()
    rw_model = reader.string("report_writer_model", "reportWriterModel")
    singles.append(("report-writer", rw_provider or EARLIER_DEFAULT_PROVIDER, rw_model))
    executor = reader.string("executor").lower() or EARLIER_DEFAULT_PROVIDER
    singles.append(("implementer", executor, reader.provider_model(executor)))
    return singles


def _critic(
    choices: RoleChoices,
    reader: SourceReader,
    critic_role: RoleRequirement | None,
    answered: list[str],
) -> tuple[str, str, str] | None:
    """The critic (optional), converted only when the v1 file holds the person's answer:
    its provider (returned, bound like the others), or "no critic" (docs/decisions.md)."""
    critic = reader.string("critic").lower()
    if critic_role is None:
        return None
    if not critic and reader.optional_bool("critic_pending_text"):
        # "Add a critic" was chosen; its provider was still to be typed.
        choices.set_count(critic_role, 1)
    elif critic in CRITIC_OFF or (not critic and any(s in answered for s in _CRITIC_STEPS)):
        choices.set_count(critic_role, 0)
    elif critic:
        return ("critic", critic, reader.provider_model(critic))
    return None


def convert_v1_roles(
    reader: SourceReader,
    profile: Profile,
    pool: ModelPool,
    scopes: DefaultScopes,
    entry_mode: str,
    task_type: str,
    answered: list[str],
    home_provider: str = EARLIER_DEFAULT_PROVIDER,
) -> RoleChoices:
    """The earlier okstra's v1 → role conversion (`home_provider`: the host's own
    provider, for a lead without one)."""
    choices = RoleChoices()
    static = {r.role: r for r in profile.static_roles}
    _cross_roster(choices, reader, profile, pool, scopes, task_type)
    singles = _singles(reader, entry_mode, home_provider)
    critic = _critic(choices, reader, static.get("critic"), answered)
    if critic is not None:
        singles.append(critic)
    for role, provider_id, value in singles:
        requirement = static.get(role)
        if role != LEADER and (requirement is None or requirement.max < 1):
            continue
        if requirement is not None and choices.set_count(requirement, 1) < 1:
            continue
        model = legacy_model(pool, scopes, provider_id, role, value)
        if model is not None:
            choices.set_models(role, [model.ref])
    return choices


def settle_confirmed(profile: Profile, choices: RoleChoices) -> None:
    """A confirmed file ran its team as it was: unasked counts take the earlier values (an
    optional role never added: 0, an adjustable one: its recommended count)."""
    for requirement in profile.static_roles:
        if requirement.role in choices.counts:
            continue
        if requirement.kind is RoleKind.OPTIONAL:
            choices.counts[requirement.role] = 0
        elif requirement.kind is RoleKind.ADJUSTABLE:
            choices.counts[requirement.role] = requirement.recommended_count


def selection_order(
    profile: Profile, choices: RoleChoices, entry_mode: str, *, leader_session: bool = True
) -> list[tuple[str, str]]:
    """Converted choices as `(step id, answer)` in the engine's asking order: leader-session,
    role counts, role adds, then role models (leader first, profile order, ordinal from 1)."""
    order: list[tuple[str, str]] = []
    if entry_mode == CURRENT_SESSION and leader_session:
        order.append((LEADER_SESSION, LEADER_SESSION_ANSWER))
    for kind in (RoleKind.ADJUSTABLE, RoleKind.OPTIONAL):
        order += [
            (count_step(r.role, kind is RoleKind.OPTIONAL), str(choices.counts[r.role]))
            for r in profile.static_roles
            if r.kind is kind and r.role in choices.counts
        ]
    for role in (LEADER, *(r.role for r in profile.static_roles)):
        for ordinal, ref in enumerate(choices.models.get(role, ()), start=1):
            order.append((model_step(role, ordinal), ref))
    return order


def _earlier_fail(source: Path, name: str, expected: str) -> StateFileError:
    return StateFileError(
        f"expected {expected} in an earlier okstra's v2 wizard state", path=source, field=name
    )


def earlier_role_fields(
    reader: SourceReader,
) -> tuple[dict[str, int], dict[str, list[str]], list[str]]:
    """`roleCounts`, `roleModels`, `roleSelectionOrder` of an earlier v2 file, type-checked."""
    raw, source = reader.raw, reader.source
    counts_field, models_field, order_field = V2_ROLE_FIELDS
    counts: Any = raw.get(counts_field)
    counts = {} if counts is None else counts
    if not isinstance(counts, dict):
        raise _earlier_fail(source, "roleCounts", "an object mapping roles to counts")
    for role, n in counts.items():
        if type(n) is not int or n < 0:
            raise _earlier_fail(
                source, f"roleCounts.{role}", "a count ≥ 0 (a boolean is not a count)"
            )
    models: Any = raw.get(models_field)
    models = {} if models is None else models
    if not isinstance(models, dict):
        raise _earlier_fail(source, "roleModels", "an object mapping roles to arrays of model refs")
    for role, refs in models.items():
        if not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
            raise _earlier_fail(source, f"roleModels.{role}", "an array of model refs")
    order = raw.get(order_field)
    order = [] if order is None else order
    if not isinstance(order, list) or not all(isinstance(s, str) for s in order):
        raise _earlier_fail(source, order_field, "an array of step ids")
    answered = raw.get("answered")
    if isinstance(answered, list):
        for index, item in enumerate(answered):
            if not isinstance(item, str):
                raise _earlier_fail(source, f"answered[{index}]", "a step id (a string)")
    return dict(counts), {r: list(m) for r, m in models.items()}, list(order)


def _model_limit(
    role: str, static: Mapping[str, RoleRequirement], choices: RoleChoices, entry_mode: str
) -> int:
    """How many models of `role` the converted team has instances for."""
    if role == LEADER:
        return 1 if entry_mode == SPAWN_PROCESS else 0
    requirement = static.get(role)
    if requirement is None:
        return 0
    if requirement.kind is RoleKind.FIXED:
        return requirement.min
    return choices.counts.get(role, 0)


def earlier_choices(
    profile: Profile,
    counts: Mapping[str, int],
    models: Mapping[str, list[str]],
    entry_mode: str,
    pool: ModelPool,
    notes: list[str],
) -> RoleChoices:
    """The earlier v2 role selection, kept where this okstra's profile still allows it."""
    choices = RoleChoices()
    static = {r.role: r for r in profile.static_roles}
    for role, n in counts.items():
        requirement = static.get(role)
        if requirement is None or requirement.kind not in (RoleKind.ADJUSTABLE, RoleKind.OPTIONAL):
            notes.append(f"roleCounts.{role} is not carried over: the role takes no count here")
        elif not requirement.min <= n <= requirement.max:
            notes.append(
                f"roleCounts.{role} = {n} is not carried over: expected "
                f"{requirement.min}..{requirement.max}; it is asked again"
            )
        else:
            choices.counts[role] = n
    for role, refs in models.items():
        limit = _model_limit(role, static, choices, entry_mode)
        if refs and limit == 0:
            notes.append(
                f"roleModels.{role} is not carried over: the role has no instance to fill "
                "(its count is asked first, or the role is gone)"
            )
            continue
        if len(refs) > limit:
            notes.append(
                f"roleModels.{role}: {len(refs) - limit} model(s) beyond the role's count "
                "are not carried over"
            )
        kept: list[str] = []
        for ref in refs[:limit]:
            try:
                model: PoolModel | None = pool.lookup(ref)
            except UsageError:
                model = None
            if model is None or role not in model.roles or model.ref in kept:
                notes.append(
                    f"roleModels.{role}[{len(kept)}] {ref!r} is not carried over "
                    "(unknown here, or not for this role): it is asked again"
                )
                break
            kept.append(model.ref)
        choices.set_models(role, kept)
    return choices
