"""Assignment resolution: one model per role instance, exactly (SPEC §5).

The problem: every role instance needs an available model; within a role, instances use
distinct models (``distinct = "model"``) or distinct providers (``distinct =
"provider"``); ``exclude_models_of`` forbids a role to use any model that one of the
listed roles uses. Because that is a condition on the finished team, it binds both
ways once the team is complete: whichever of the two roles is chosen first, the other
may not take the same model (a role with ``exclude_models_of = ["analyser"]`` and the
analysers end up with disjoint model sets). The listed role is not otherwise restricted.

Feasibility ("can this partial selection still be completed?") is decided exactly by a
small search over *model classes* rather than models: two models of one provider that
are available to the same roles and already used by the same roles are interchangeable,
so the search branches over a few dozen classes even for a pool of a thousand models.
Roles are independent unless linked by ``exclude_models_of``, so each linked group
(component) is searched on its own. The search picks the most constrained role first,
prunes with per-role and per-pair counting bounds (Hall-type conditions that every
completion must meet), and remembers the states it has decided.

Filling the unchosen instances is deterministic: instance by instance, in team order,
the first candidate (defaults rotated so that instance n starts at default n, then the
pool in registry order) that keeps the whole problem completable. It never dead-ends.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from .binding import Binding, bind
from .catalog.models import (
    LEADER,
    EntryMode,
    HostSpec,
    Profile,
    RoleKind,
    RoleRequirement,
)
from .defaults import DefaultScopes
from .errors import AssignmentResolutionError, UsageError
from .pool import Availability, ModelPool, PoolModel

__all__ = [
    "AssignmentPlan",
    "OptionState",
    "ResolvedAssignment",
    "check_entry_mode",
    "model_options",
    "resolve_assignments",
    "role_counts_for",
    "role_instances",
]

LEADER_DUTY = "lead"
POOL_PROVENANCE = "default:pool"
_AVAILABLE = Availability(True, None)
CURRENT_SESSION_PROVENANCE = "current-session"


@dataclass(frozen=True)
class ResolvedAssignment:
    """One role instance bound to a model.

    ``provenance`` says why the model is there: ``chosen`` (explicit), ``default:project``
    / ``default:global`` / ``default:bundled`` (a default candidate), ``default:pool``
    (the first completable pool model when no default fits), ``current-session`` (the
    host session leads). The wizard may override it with ``reused:…`` / ``converted:…``.
    """

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
    entry_mode: EntryMode
    provenance: str


@dataclass(frozen=True)
class AssignmentPlan:
    """A resolved team: assignments (leader first, then profile order) and dynamic roles."""

    assignments: tuple[ResolvedAssignment, ...]
    dynamic_roles: tuple[RoleRequirement, ...]


@dataclass(frozen=True)
class OptionState:
    """One option of a ``role-model`` step."""

    model: PoolModel
    disabled_reason: str | None
    provenance: str | None

    @property
    def selectable(self) -> bool:
        return self.disabled_reason is None


# --------------------------------------------------------------------------- counts


def check_entry_mode(host: HostSpec, entry_mode: EntryMode) -> None:
    """Refuse an entry mode the host does not support.

    Raises:
        UsageError: the host does not list the mode, or has no native provider to lead
            in ``current-session`` mode.
    """
    if entry_mode not in host.entry_modes:
        supported = ", ".join(host.entry_modes) or "none"
        raise UsageError(
            f"host {host.id!r} does not support entry mode {entry_mode!r} (supported: {supported})"
        )
    if entry_mode == "current-session" and host.native_provider is None:
        raise UsageError(
            f"host {host.id!r} has no native provider, so it cannot lead in current-session mode"
        )


def role_counts_for(profile: Profile, role_counts: Mapping[str, int]) -> dict[str, int]:
    """The count of every role of the team: leader (1), then static roles in profile order.

    Fixed roles use their count, adjustable roles the chosen count (else the recommended
    one), optional roles the chosen count (else 0).

    Raises:
        UsageError: an unknown role, a dynamic role given a count, a count outside
            ``[min, max]``, or a leader count other than 1.
    """
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


def role_instances(profile: Profile, role_counts: Mapping[str, int]) -> list[tuple[str, int]]:
    """Every role instance ``(role, ordinal)``: the leader first, then profile order.

    Raises:
        UsageError: invalid counts (see `role_counts_for`).
    """
    return [
        (role, ordinal)
        for role, count in role_counts_for(profile, role_counts).items()
        for ordinal in range(1, count + 1)
    ]


def _duty(profile: Profile, role: str) -> str:
    requirement = profile.role(role)
    if requirement is not None:
        return requirement.duty
    return LEADER_DUTY if role == LEADER else role


# --------------------------------------------------------------------------- the team


Key = tuple[int, int, int]  # (provider index, availability mask, usage mask)
State = tuple[tuple[Key, int], ...]


@dataclass
class _Role:
    name: str
    bit: int
    count: int
    distinct: str
    excludes: frozenset[str]  # roles this role may not share models with (as declared)
    related: frozenset[str] = frozenset()  # symmetric closure, within the team
    related_mask: int = 0
    component: int = 0
    defaults: list[tuple[PoolModel, str]] = field(default_factory=list)
    pool_models: list[PoolModel] = field(default_factory=list)
    domain: frozenset[str] = frozenset()


@dataclass(frozen=True)
class _Fixed:
    role: str
    ordinal: int
    model: PoolModel


class _Team:
    """A profile's team on one host: roles, candidate lists, domains and the solver."""

    def __init__(
        self,
        profile: Profile,
        role_counts: Mapping[str, int],
        scopes: DefaultScopes,
        pool: ModelPool,
        host: HostSpec,
        entry_mode: EntryMode,
    ) -> None:
        check_entry_mode(host, entry_mode)
        self.profile = profile
        self.scopes = scopes
        self.pool = pool
        self.host = host
        self.entry_mode = entry_mode
        self.counts = role_counts_for(profile, role_counts)
        self.roles: dict[str, _Role] = {}
        for name, count in self.counts.items():
            if count == 0 or (name == LEADER and entry_mode == "current-session"):
                continue
            requirement = profile.role(name)
            self.roles[name] = _Role(
                name=name,
                bit=1 << len(self.roles),
                count=count,
                distinct=requirement.distinct if requirement else "model",
                excludes=frozenset(requirement.exclude_models_of) if requirement else frozenset(),
            )
        for role in self.roles.values():
            role.excludes = frozenset(
                r for r in role.excludes if r in self.roles and r != role.name
            )
        for role in self.roles.values():
            related = set(role.excludes)
            related.update(o.name for o in self.roles.values() if role.name in o.excludes)
            role.related = frozenset(related)
            role.related_mask = sum(self.roles[r].bit for r in related)
        self._components()
        for role in self.roles.values():
            role.defaults = scopes.candidates(role.name, pool)
            default_refs = {m.ref for m, _ in role.defaults}
            role.pool_models = [m for m in pool.list(role.name) if m.ref not in default_refs]
            role.domain = pool.available_refs(role.name, host, entry_mode)
        self.provider_index = {p.id: i for i, p in enumerate(pool.providers)}
        index = self.provider_index
        # Every model's provider index by ref (the solvers' model classes start here).
        self.provider_of_ref: dict[str, int] = pool.memo(
            "resolver-provider-of-ref",
            lambda: {m.ref: index[m.provider_id] for m in pool.models()},
        )
        self.solvers = {c: _Solver(self, c) for c in set(r.component for r in self.roles.values())}

    def _components(self) -> None:
        component = 0
        seen: set[str] = set()
        for name in self.roles:
            if name in seen:
                continue
            stack = [name]
            seen.add(name)
            while stack:
                current = self.roles[stack.pop()]
                current.component = component
                for other in current.related:
                    if other not in seen:
                        seen.add(other)
                        stack.append(other)
            component += 1

    def availability(self, model: PoolModel, role: str) -> Availability:
        return self.pool.availability(model.ref, role, self.host, self.entry_mode)

    def candidates(self, role: str, ordinal: int) -> Iterator[tuple[PoolModel, str | None]]:
        """Defaults rotated so instance `ordinal` starts at default `ordinal`, then the pool.

        An iterator: filling an instance usually stops at the first few candidates.
        """
        spec = self.roles[role]
        defaults: list[tuple[PoolModel, str | None]] = list(spec.defaults)
        if defaults:
            shift = (ordinal - 1) % len(defaults)
            defaults = defaults[shift:] + defaults[:shift]
        return itertools.chain(defaults, zip(spec.pool_models, itertools.repeat(None)))

    def instances(self) -> list[tuple[str, int]]:
        return [(r.name, n) for r in self.roles.values() for n in range(1, r.count + 1)]

    def conflict(
        self, fixed: Sequence[_Fixed], role: str, ordinal: int, model: PoolModel
    ) -> str | None:
        """Why `model` for `role#ordinal` clashes with another fixed instance, or None."""
        spec = self.roles[role]
        for other in fixed:
            if other.role == role and other.ordinal == ordinal:
                continue
            if other.role == role:
                if other.model.ref == model.ref:
                    return f"already chosen for {role}#{other.ordinal}"
                if spec.distinct == "provider" and other.model.provider_id == model.provider_id:
                    return (
                        f"provider {model.provider_id!r} is already used by "
                        f"{role}#{other.ordinal} ({role} needs distinct providers)"
                    )
            elif other.role in spec.related and other.model.ref == model.ref:
                if other.role in spec.excludes:
                    why = f"{role} excludes models of {other.role}"
                else:
                    why = f"{other.role} excludes models of {role}"
                return f"used by {other.role}#{other.ordinal} ({why})"
        return None

    def conflicts(self, fixed: Sequence[_Fixed], role: str, ordinal: int) -> _Conflicts:
        """`conflict` for many candidate models of one instance, indexed once."""
        spec = self.roles[role]
        by_ref: dict[str, tuple[int, str]] = {}
        by_provider: dict[str, tuple[int, str]] = {}
        # Each entry keeps the first fixed item (in `fixed` order) that clashes, as the
        # loop of `conflict` would find it, with the same reason.
        for index, other in enumerate(fixed):
            if other.role == role and other.ordinal == ordinal:
                continue
            if other.role == role:
                by_ref.setdefault(
                    other.model.ref, (index, f"already chosen for {role}#{other.ordinal}")
                )
                if spec.distinct == "provider":
                    provider = other.model.provider_id
                    by_provider.setdefault(
                        provider,
                        (
                            index,
                            f"provider {provider!r} is already used by "
                            f"{role}#{other.ordinal} ({role} needs distinct providers)",
                        ),
                    )
            elif other.role in spec.related:
                if other.role in spec.excludes:
                    why = f"{role} excludes models of {other.role}"
                else:
                    why = f"{other.role} excludes models of {role}"
                by_ref.setdefault(
                    other.model.ref, (index, f"used by {other.role}#{other.ordinal} ({why})")
                )
        return _Conflicts(by_ref, by_provider)

    def feasible(self, fixed: Sequence[_Fixed]) -> bool:
        """Exact: can these (consistent, available) fixed choices be completed?"""
        return all(solver.feasible(solver.state(fixed)) for solver in self.solvers.values())


@dataclass(frozen=True)
class _Conflicts:
    """The clashes of one instance with the fixed choices, by model ref and provider."""

    by_ref: dict[str, tuple[int, str]]
    by_provider: dict[str, tuple[int, str]]

    def reason(self, model: PoolModel) -> str | None:
        """What `_Team.conflict` says for `model` (the first clashing fixed item)."""
        if not self.by_ref and not self.by_provider:
            return None
        hit = self.by_ref.get(model.ref)
        other = self.by_provider.get(model.provider_id)
        if other is not None and (hit is None or other[0] < hit[0]):
            hit = other
        return None if hit is None else hit[1]


# Teams are kept per pool: a wizard step resolves the chosen team (to drop models that
# no longer fit), then computes the next prompt's options (and the TUI's confirm screen
# resolves again) — all on one step's pool, with the same profile, counts, scopes and
# host. Building a team walks the whole pool once per role (availability, domains,
# model classes), so it is built once per pool and reused. A pool lives for one step
# ("availability cached for one step"), so does its team; the solvers' memoised states
# stay valid for the team's life (they depend on the team, not on the choices). The
# cache lives on the pool itself: a weak-keyed side table would be kept alive by the
# team's own reference to its pool.


def _team(
    profile: Profile,
    role_counts: Mapping[str, int],
    scopes: DefaultScopes,
    pool: ModelPool,
    host: HostSpec,
    entry_mode: EntryMode,
) -> _Team:
    """The team of these inputs on `pool`: built on first use, then reused."""

    def build() -> _Team:
        return _Team(profile, role_counts, scopes, pool, host, entry_mode)

    try:
        counts = frozenset(role_counts.items())
    except TypeError:  # an unhashable count: the build refuses it with a clear error
        return build()
    # Identity keys: the cached team holds its profile, scopes and host, so their ids
    # cannot be reused by other objects while it lives.
    key = ("resolver-team", id(profile), counts, id(scopes), id(host), entry_mode)
    return pool.memo(key, build)


Move = tuple[int, Key]  # (role index within the solver, the class a model is taken from)
Path = tuple[Move, ...]


class _Solver:
    """Exact feasibility of one component (roles linked by ``exclude_models_of``).

    A state is a multiset of model classes ``(provider, available-to mask, used-by
    mask)`` restricted to the component's roles. Models in one class are
    interchangeable (swapping two of them maps completions to completions), so deciding
    a state decides every assignment it stands for. Decided states are memoised for the
    life of the team (one pool: one wizard step's resolutions and option computations),
    feasible ones with the sequence of moves that completes them.
    """

    def __init__(self, team: _Team, component: int) -> None:
        self.team = team
        self.roles = [r for r in team.roles.values() if r.component == component]
        self.mask = sum(r.bit for r in self.roles)
        self.index = {r.name: i for i, r in enumerate(self.roles)}
        self.bits = [r.bit for r in self.roles]
        self.blocked = [r.bit | r.related_mask for r in self.roles]
        self.by_provider = [r.distinct == "provider" for r in self.roles]
        self.wanted = [r.count for r in self.roles]
        self.pairs = [
            (i, self.index[other]) for i, r in enumerate(self.roles) for other in sorted(r.excludes)
        ]
        members: dict[str, int]
        if len(self.roles) == 1:  # the usual component: one role, one availability bit
            members = dict.fromkeys(self.roles[0].domain, self.roles[0].bit)
        else:
            members = {}
            for role in self.roles:
                for ref in role.domain:
                    members[ref] = members.get(ref, 0) | role.bit
        # A model's class is (provider index, availability mask); `members` holds the
        # mask of every model in some domain of the component (the rest have no class).
        self.members = members
        self.provider_of = team.provider_of_ref
        providers = map(self.provider_of.__getitem__, members)
        self.base: dict[Key, int] = dict(
            Counter(zip(providers, members.values(), itertools.repeat(0)))
        )
        self.ok: dict[State, Path] = {}
        self.failed: set[State] = set()

    # -- states

    def usage(self, fixed: Iterable[_Fixed]) -> dict[str, int]:
        used: dict[str, int] = {}
        for item in fixed:
            role = self.team.roles.get(item.role)
            if role is not None and role.bit & self.mask:
                used[item.model.ref] = used.get(item.model.ref, 0) | role.bit
        return used

    def state_dict(self, fixed: Iterable[_Fixed]) -> dict[Key, int]:
        counts = dict(self.base)
        for ref, used in self.usage(fixed).items():
            klass = self.klass(ref)
            if klass is None:
                # Outside every domain here: it only marks a provider as used.
                model = self.team.pool.resolve(ref)
                klass = (self.team.provider_index[model.provider_id], 0)
            else:
                _take(counts, (klass[0], klass[1], 0))
            key = (klass[0], klass[1], used)
            counts[key] = counts.get(key, 0) + 1
        return counts

    def klass(self, ref: str) -> tuple[int, int] | None:
        """The class of a model in some domain of the component, else None."""
        avail = self.members.get(ref)
        return None if avail is None else (self.provider_of[ref], avail)

    def state(self, fixed: Iterable[_Fixed]) -> State:
        return _freeze(self.state_dict(fixed))

    def key_of(self, fixed_usage: Mapping[str, int], ref: str) -> Key:
        klass = self.klass(ref)
        if klass is None:
            model = self.team.pool.resolve(ref)
            klass = (self.team.provider_index[model.provider_id], 0)
        return (klass[0], klass[1], fixed_usage.get(ref, 0))

    # -- bounds

    def needs(self, counts: Mapping[Key, int]) -> list[int]:
        used = [0] * len(self.roles)
        for (_, _, u), n in counts.items():
            if u:
                for i, bit in enumerate(self.bits):
                    if u & bit:
                        used[i] += n
        return [w - u for w, u in zip(self.wanted, used, strict=True)]

    def usable(self, counts: Mapping[Key, int], needy: Sequence[int]) -> dict[int, list[Key]]:
        """For each needy role, the classes it may still take a model from."""
        out: dict[int, list[Key]] = {i: [] for i in needy}
        for key, n in counts.items():
            if n <= 0:
                continue
            _, a, u = key
            for i in needy:
                if a & self.bits[i] and not u & self.blocked[i]:
                    out[i].append(key)
        for i in needy:
            if self.by_provider[i]:
                taken = {k[0] for k in counts if k[2] & self.bits[i]}
                out[i] = [k for k in out[i] if k[0] not in taken]
        return out

    def capacity(self, counts: Mapping[Key, int], i: int, keys: Sequence[Key]) -> int:
        if self.by_provider[i]:
            return len({k[0] for k in keys})
        return sum(counts[k] for k in keys)

    def violations(self, counts: Mapping[Key, int]) -> list[str]:
        """Counting bounds every completion must meet, as ``role constraint`` lines."""
        lines: list[str] = []
        needs = self.needs(counts)
        needy = [i for i, n in enumerate(needs) if n > 0]
        usable = self.usable(counts, needy)
        for i in needy:
            role = self.roles[i]
            cap = self.capacity(counts, i, usable[i])
            if cap >= needs[i]:
                continue
            # One instance needs no distinctness: it simply has no usable model.
            label = "available-models" if role.count == 1 else f"distinct-{role.distinct}"
            if role.related:
                loose = [
                    k
                    for k, n in counts.items()
                    if n > 0 and k[1] & role.bit and not k[2] & role.bit
                ]
                if role.distinct == "provider":
                    taken = {k[0] for k in counts if k[2] & role.bit}
                    loose = [k for k in loose if k[0] not in taken]
                if self.capacity(counts, i, loose) >= needs[i]:
                    label = "exclude-models-of(" + ",".join(sorted(role.related)) + ")"
            have = role.count - needs[i]
            lines.append(f"{role.name} {label}: required={role.count}, available={have + cap}")
        if lines:
            return lines
        for i, j in self.pairs:
            if needs[i] <= 0 or needs[j] <= 0:
                continue
            union = set(usable[i]) | set(usable[j])
            cap = sum(counts[k] for k in union)
            if cap < needs[i] + needs[j]:
                both = self.bits[i] | self.bits[j]
                placed = sum(n for (_, _, u), n in counts.items() if u & both)
                lines.append(
                    f"{self.roles[i].name} exclude-models-of({self.roles[j].name}): "
                    f"required={self.wanted[i] + self.wanted[j]}, available={placed + cap}"
                )
        return lines

    # -- search

    def feasible(self, state: State) -> bool:
        return self.solve(state) is not None

    def solve(self, state: State) -> Path | None:
        """The moves that complete `state`, or None when no completion exists."""
        if state in self.ok:
            return self.ok[state]
        if state in self.failed:
            return None
        path = self._search(dict(state))
        if path is None:
            self.failed.add(state)
        else:
            self.ok[state] = path
        return path

    def _search(self, counts: dict[Key, int]) -> Path | None:
        needs = self.needs(counts)
        needy = [i for i, n in enumerate(needs) if n > 0]
        if not needy:
            return ()
        usable = self.usable(counts, needy)
        best = -1
        best_slack = 0
        for i in needy:
            slack = self.capacity(counts, i, usable[i]) - needs[i]
            if slack < 0:
                return None
            if best < 0 or slack < best_slack:
                best, best_slack = i, slack
        # Pairwise bound: two linked roles never share a model.
        for i, j in self.pairs:
            if needs[i] > 0 and needs[j] > 0:
                union = set(usable[i]) | set(usable[j])
                if sum(counts[k] for k in union) < needs[i] + needs[j]:
                    return None
        needy_mask = sum(self.bits[i] for i in needy)
        rivals = self.roles[best].related_mask & needy_mask
        bit = self.bits[best]

        def order(key: Key) -> tuple[int, int, Key]:
            # Least constraining first: a class fewer linked roles can use, more spare models.
            return ((key[1] & rivals).bit_count(), -counts[key], key)

        for key in sorted(usable[best], key=order):
            nxt = dict(counts)
            _move(nxt, key, bit)
            rest = self.solve(_freeze(nxt))
            if rest is not None:
                return ((best, key), *rest)
        return None

    def choice_feasible(
        self, counts: Mapping[Key, int], base: Path | None, role: str, key: Key
    ) -> bool:
        """Exact: does the state `counts` stay completable when `role` takes from `key`?

        `base` is a completion of `counts` (None: there is none, so no choice is
        feasible). Fast path: replay `base` with one of the role's own moves dropped —
        a valid replay is a completion. Only when no replay works, search.
        """
        if base is None:
            return False
        i = self.index[role]
        after = dict(counts)
        _move(after, key, self.bits[i])
        drops = [j for j, (r, _) in enumerate(base) if r == i]
        drops.sort(key=lambda j: base[j][1] != key)
        if any(self._replay(after, base, j) for j in drops):
            return True
        return self.solve(_freeze(after)) is not None

    def _replay(self, counts: Mapping[Key, int], path: Path, skip: int) -> bool:
        current = dict(counts)
        taken: dict[int, set[int]] = {}
        for j, (i, key) in enumerate(path):
            if j == skip:
                continue
            if current.get(key, 0) <= 0:
                return False
            if self.by_provider[i]:
                if i not in taken:
                    taken[i] = {k[0] for k in current if k[2] & self.bits[i]}
                if key[0] in taken[i]:
                    return False
                taken[i].add(key[0])
            _move(current, key, self.bits[i])
        return True


def _move(counts: dict[Key, int], key: Key, bit: int) -> None:
    _take(counts, key)
    moved = (key[0], key[1], key[2] | bit)
    counts[moved] = counts.get(moved, 0) + 1


def _take(counts: dict[Key, int], key: Key) -> None:
    left = counts[key] - 1
    if left:
        counts[key] = left
    else:
        del counts[key]


def _freeze(counts: Mapping[Key, int]) -> State:
    return tuple(sorted(counts.items()))


# --------------------------------------------------------------------------- explicit choices


def _resolve_explicit(
    team: _Team, role_models: Mapping[str, Sequence[str]]
) -> list[tuple[str, int, PoolModel]]:
    """Resolve explicit choices to pool models, refusing unusable roles and counts."""
    out: list[tuple[str, int, PoolModel]] = []
    for role, refs in role_models.items():
        if not refs:
            continue
        if role == LEADER and team.entry_mode == "current-session":
            raise UsageError(
                "in current-session mode the leader is the host session; it takes no model"
            )
        count = team.counts.get(role)
        if count is None:
            if team.profile.role(role) is not None:
                raise UsageError(
                    f"role {role!r} is dynamic (spawned at run time); it takes no model"
                )
            known = ", ".join(team.counts) or "none"
            raise UsageError(
                f"unknown role {role!r} for task type {team.profile.task_type!r} (roles: {known})"
            )
        if len(refs) > count:
            raise UsageError(f"role {role!r} has {len(refs)} models but its count is {count}")
        for ordinal, ref in enumerate(refs, start=1):
            out.append((role, ordinal, team.pool.lookup(ref)))
    return out


def _check_explicit(
    team: _Team, explicit: Sequence[tuple[str, int, PoolModel]]
) -> tuple[list[_Fixed], list[str]]:
    """Split explicit choices into valid fixed ones and failing-candidate lines."""
    valid: list[_Fixed] = []
    failures: list[str] = []
    for role, ordinal, model in _team_order(team, explicit):
        verdict = team.availability(model, role)
        reason = (
            verdict.reason if not verdict.available else team.conflict(valid, role, ordinal, model)
        )
        if reason is not None:
            failures.append(f"{role}#{ordinal} {model.ref}: {reason}")
        else:
            valid.append(_Fixed(role, ordinal, model))
    return valid, failures


def _team_order(
    team: _Team, items: Sequence[tuple[str, int, PoolModel]]
) -> list[tuple[str, int, PoolModel]]:
    rank = {name: i for i, name in enumerate(team.counts)}
    return sorted(items, key=lambda item: (rank.get(item[0], len(rank)), item[1]))


# --------------------------------------------------------------------------- resolve


def _explain(
    team: _Team, valid: Sequence[_Fixed], failures: list[str]
) -> AssignmentResolutionError:
    candidates = list(failures)
    constraints: list[str] = []
    fixed_keys = {(f.role, f.ordinal) for f in valid}
    for solver in team.solvers.values():
        counts = solver.state_dict(valid)
        if solver.feasible(_freeze(counts)):
            continue
        lines = solver.violations(counts)
        if not lines:
            names = ", ".join(r.name for r in solver.roles)
            total = sum(r.count for r in solver.roles)
            lines = [
                f"{names} distinct+exclude-models-of: required={total} instances; "
                "every count fits on its own, but no combination of the available models "
                "satisfies all constraints together"
            ]
        constraints.extend(lines)
        for role in solver.roles:
            free = [n for n in range(1, role.count + 1) if (role.name, n) not in fixed_keys]
            if not free:
                continue
            for model, _ in team.candidates(role.name, free[0]):
                verdict = team.availability(model, role.name)
                if not verdict.available:
                    candidates.append(f"{role.name}#{free[0]} {model.ref}: {verdict.reason}")
    return AssignmentResolutionError(candidates, constraints)


def resolve_assignments(
    profile: Profile,
    role_counts: Mapping[str, int],
    role_models: Mapping[str, Sequence[str]],
    scopes: DefaultScopes,
    pool: ModelPool,
    host: HostSpec,
    entry_mode: EntryMode,
    *,
    current_session_model: str | None = None,
) -> AssignmentPlan:
    """Resolve every role instance of a team to a model binding.

    Args:
        profile: the phase's role profile.
        role_counts: chosen counts of adjustable/optional roles (others: fixed count;
            adjustable: recommended; optional: 0).
        role_models: explicit model refs (or ``provider/alias``) per role, in ordinal
            order — a prefix; the rest is filled from defaults, then the pool.
        scopes: model defaults scopes.
        pool: the model pool (availability).
        host: the host runtime.
        entry_mode: ``spawn-process`` or ``current-session``.
        current_session_model: in current-session mode, the host session's model ref
            when known (else ``<native provider>/current-session``).

    Returns:
        The plan: leader first, then profile order, ordinals from 1.

    Raises:
        UsageError: invalid counts, unknown roles/models, too many models for a role.
        OkstraError: a configured default is unavailable for a role of this team.
        AssignmentResolutionError: no complete team exists; lists every failing
            candidate and every unsatisfied constraint at once.
    """
    team = _team(profile, role_counts, scopes, pool, host, entry_mode)
    explicit = _resolve_explicit(team, role_models)
    scopes.validate(pool, host, entry_mode, team.roles)
    valid, failures = _check_explicit(team, explicit)
    if failures or not team.feasible(valid):
        raise _explain(team, valid, failures)
    chosen: dict[tuple[str, int], tuple[PoolModel, str]] = {
        (f.role, f.ordinal): (f.model, "chosen") for f in valid
    }
    fixed = list(valid)
    for role, ordinal in team.instances():
        if (role, ordinal) in chosen:
            continue
        picked = _first_completable(team, fixed, role, ordinal)
        fixed.append(_Fixed(role, ordinal, picked[0]))
        chosen[(role, ordinal)] = picked
    assignments: list[ResolvedAssignment] = []
    for role, count in team.counts.items():
        if role == LEADER and entry_mode == "current-session":
            assignments.append(_current_session_leader(profile, host, current_session_model))
            continue
        for ordinal in range(1, count + 1):
            model, provenance = chosen[(role, ordinal)]
            assignments.append(
                ResolvedAssignment(
                    role=role,
                    ordinal=ordinal,
                    duty=_duty(profile, role),
                    provider_id=model.provider_id,
                    model_ref=model.ref,
                    model_id=model.model_id,
                    display_name=model.display,
                    execution=model.execution,
                    binding=bind(model, role, host, entry_mode),
                    host_runtime=host.id,
                    entry_mode=entry_mode,
                    provenance=provenance,
                )
            )
    return AssignmentPlan(tuple(assignments), profile.dynamic_roles)


def _first_completable(
    team: _Team, fixed: list[_Fixed], role: str, ordinal: int
) -> tuple[PoolModel, str]:
    solver = team.solvers[team.roles[role].component]
    counts = solver.state_dict(fixed)
    usage = solver.usage(fixed)
    base = solver.solve(_freeze(counts))
    conflicts = team.conflicts(fixed, role, ordinal)
    for model, provenance in team.candidates(role, ordinal):
        if model.ref not in team.roles[role].domain:
            continue
        if conflicts.reason(model) is not None:
            continue
        if solver.choice_feasible(counts, base, role, solver.key_of(usage, model.ref)):
            return model, provenance or POOL_PROVENANCE
    # Unreachable: the state before this instance was feasible, so some candidate is.
    raise AssertionError(f"no completable candidate for {role}#{ordinal}")


def _current_session_leader(
    profile: Profile, host: HostSpec, current_session_model: str | None
) -> ResolvedAssignment:
    provider = host.native_provider or ""
    ref = current_session_model or f"{provider}/current-session"
    model_id = ref.partition("/")[2] or "current-session"
    return ResolvedAssignment(
        role=LEADER,
        ordinal=1,
        duty=_duty(profile, LEADER),
        provider_id=provider,
        model_ref=ref,
        model_id=model_id,
        display_name=f"{host.display_label} current session",
        execution="",
        binding=Binding(runner="current-session", host_runtime=host.id, host_model_value=None),
        host_runtime=host.id,
        entry_mode="current-session",
        provenance=CURRENT_SESSION_PROVENANCE,
    )


# --------------------------------------------------------------------------- options


def model_options(
    profile: Profile,
    role_counts: Mapping[str, int],
    role_models: Mapping[str, Sequence[str]],
    scopes: DefaultScopes,
    pool: ModelPool,
    host: HostSpec,
    entry_mode: EntryMode,
    role: str,
    ordinal: int,
) -> list[OptionState]:
    """The options of step ``role-model:<role>:<ordinal>``.

    Order: the role's default candidates rotated so that instance `ordinal` starts at
    default `ordinal`, then the rest of the pool for the role. The choices in
    `role_models` are held fixed, except this role's ordinals from `ordinal` on.
    An option is selectable exactly when a complete valid team extends it; otherwise
    it carries the reason: unavailable, taken by a constraint, or no complete team
    would remain.

    Raises:
        UsageError: invalid counts, unknown roles/models, or no such instance.
    """
    team = _team(profile, role_counts, scopes, pool, host, entry_mode)
    spec = team.roles.get(role)
    if spec is None or not 1 <= ordinal <= spec.count:
        if role == LEADER and entry_mode == "current-session":
            raise UsageError("in current-session mode the leader takes no model")
        raise UsageError(f"the team has no instance {role}#{ordinal}")
    kept = {r: list(refs) for r, refs in role_models.items()}
    if role in kept:
        kept[role] = kept[role][: ordinal - 1]
    valid, failures = _check_explicit(team, _resolve_explicit(team, kept))
    blocked: str | None = None
    if failures:
        blocked = "no complete team: earlier choice " + "; ".join(failures)
    else:
        for component, solver in team.solvers.items():
            if component != spec.component and not solver.feasible(solver.state(valid)):
                lines = solver.violations(solver.state_dict(valid)) or ["roles cannot be completed"]
                blocked = "no complete team: " + "; ".join(lines)
                break
    solver = team.solvers[spec.component]
    counts = solver.state_dict(valid)
    usage = solver.usage(valid)
    base = solver.solve(_freeze(counts)) if blocked is None else None
    verdicts: dict[Key, str | None] = {}
    options: list[OptionState] = []
    conflicts = team.conflicts(valid, role, ordinal)
    domain = spec.domain
    for model, provenance in team.candidates(role, ordinal):
        reason: str | None
        # The role's domain is exactly its available models: ask the pool for the
        # reason only when there is one to show.
        verdict = _AVAILABLE if model.ref in domain else team.availability(model, role)
        if not verdict.available:
            reason = verdict.reason
        elif blocked is not None:
            reason = blocked
        else:
            reason = conflicts.reason(model)
            if reason is None:
                key = solver.key_of(usage, model.ref)
                if key not in verdicts:
                    verdicts[key] = _completion_reason(solver, counts, base, key, role)
                reason = verdicts[key]
        options.append(OptionState(model=model, disabled_reason=reason, provenance=provenance))
    return options


def _completion_reason(
    solver: _Solver, counts: Mapping[Key, int], base: Path | None, key: Key, role: str
) -> str | None:
    if solver.choice_feasible(counts, base, role, key):
        return None
    after = dict(counts)
    _move(after, key, solver.bits[solver.index[role]])
    lines = solver.violations(after)
    detail = f" ({'; '.join(lines)})" if lines else ""
    return f"no complete team would remain{detail}"
