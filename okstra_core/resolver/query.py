"""The question put to the resolver: one team on one host, with what is chosen so far."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from ..catalog.models import LEADER, EntryMode, HostSpec, Profile, RoleKind
from ..defaults import DefaultScopes
from ..errors import UsageError
from ..pool import ModelPool
from ..records import dataclass, field
from ..vocabulary import CURRENT_SESSION

LEADER_DUTY = "lead"


@dataclass(frozen=True)
class TeamQuery:
    """Everything the resolver is asked about one team.

    ``counts``: the chosen counts (the rest: `role_counts_for`); ``models``: explicit
    refs (or ``provider/alias``) per role, a prefix in ordinal order, the rest filled
    from defaults, then the pool; ``current_session_model``: in current-session mode the
    host session's model ref when known (else ``<native provider>/current-session``).
    """

    profile: Profile
    counts: Mapping[str, int]
    scopes: DefaultScopes
    pool: ModelPool
    host: HostSpec
    entry_mode: EntryMode
    models: Mapping[str, Sequence[str]] = field(default_factory=dict)
    current_session_model: str | None = None

    def smallest(self) -> TeamQuery:
        """The same query with every unchosen count at its minimum: complete exactly when
        some choice of the open counts is (every rule forbids a pair of instances)."""
        return replace(self, counts=minimal_counts(self.profile, self.counts))


def check_entry_mode(host: HostSpec, entry_mode: EntryMode) -> None:
    """Refuse (`UsageError`) an entry mode the host does not list, or current-session
    on a host without a native provider to lead."""
    if entry_mode not in host.entry_modes:
        supported = ", ".join(host.entry_modes) or "none"
        raise UsageError(
            f"host {host.id!r} does not support entry mode {entry_mode!r} (supported: {supported})"
        )
    if entry_mode == CURRENT_SESSION and host.native_provider is None:
        raise UsageError(
            f"host {host.id!r} has no native provider, so it cannot lead in current-session mode"
        )


def check_counts(profile: Profile, role_counts: Mapping[str, int]) -> None:
    """Refuse (`UsageError`) an unknown role, a dynamic role given a count, a count
    outside ``[min, max]``, or a leader count other than 1."""
    for role, count in role_counts.items():
        if isinstance(count, bool) or not isinstance(count, int):
            raise UsageError(f"role count of {role!r} must be an integer, got {count!r}")
        if role == LEADER:
            if count != 1:
                raise UsageError(f"a team has exactly one leader; got leader={count}")
            continue
        requirement = profile.role(role)
        if requirement is None:
            known = ", ".join(r.role for r in profile.static_roles) or "none"
            raise UsageError(
                f"unknown role {role!r} for task type {profile.task_type!r} (roles: {known})"
            )
        if requirement.dynamic:
            raise UsageError(
                f"role {role!r} is dynamic (spawned at run time by the lead); it takes no count"
            )
        if not requirement.min <= count <= requirement.max:
            raise UsageError(
                f"role {role!r} count must be between {requirement.min} and "
                f"{requirement.max}, got {count}"
            )


def role_counts_for(profile: Profile, role_counts: Mapping[str, int]) -> dict[str, int]:
    """The count of every role: leader (1), then static roles in profile order.

    The chosen count, else the fixed count, the recommended one (adjustable) or 0
    (optional). Raises as `check_counts`.
    """
    check_counts(profile, role_counts)
    counts = {LEADER: 1}
    for requirement in profile.static_roles:
        if requirement.role == LEADER:
            continue
        if requirement.role in role_counts:
            counts[requirement.role] = role_counts[requirement.role]
        elif requirement.kind is RoleKind.OPTIONAL:
            counts[requirement.role] = 0
        elif requirement.kind is RoleKind.ADJUSTABLE:
            counts[requirement.role] = requirement.recommended_count
        else:
            counts[requirement.role] = requirement.min
    return counts


def minimal_counts(profile: Profile, role_counts: Mapping[str, int]) -> dict[str, int]:
    """The chosen counts, and every other adjustable or optional role at its minimum."""
    out = dict(role_counts)
    for requirement in profile.static_roles:
        if requirement.role == LEADER or requirement.role in out:
            continue
        if requirement.kind in (RoleKind.ADJUSTABLE, RoleKind.OPTIONAL):
            out[requirement.role] = requirement.min
    return out


def role_instances(profile: Profile, role_counts: Mapping[str, int]) -> list[tuple[str, int]]:
    """Every role instance ``(role, ordinal)``: the leader first, then profile order."""
    return [
        (role, ordinal)
        for role, count in role_counts_for(profile, role_counts).items()
        for ordinal in range(1, count + 1)
    ]


def duty_of(profile: Profile, role: str) -> str:
    requirement = profile.role(role)
    if requirement is not None:
        return requirement.duty
    return LEADER_DUTY if role == LEADER else role
