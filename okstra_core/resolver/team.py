"""The team model: a profile's role instances on one host, their candidates and rules.

The question put to the resolver is a `TeamQuery`: one team on one host, with what is
chosen so far (its counts checked by `check_counts`, its entry mode by
`check_entry_mode`). A `Team` is built once per query shape and pool, and cached on the
pool (a pool lives for one wizard step): each role's default candidates, pool order and
domain (its available refs), the one clash rule between two chosen instances, and one
`Solver` per linked group of roles. What does not depend on the step is its `TeamCore`,
shared by the teams of every pool on the same provider specs (`ModelPool.shared_memo`).
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace

from ..binding import choose_runner
from ..catalog.models import LEADER, EntryMode, HostSpec, Profile, RoleKind
from ..defaults import DefaultScopes
from ..errors import UsageError
from ..pool import Availability, ModelPool, PoolModel
from ..records import dataclass, field
from ..vocabulary import CLI_WRAPPER, CURRENT_SESSION
from .solver import Solver, SolverRole

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
        counts = dict(self.counts)
        for requirement in self.profile.static_roles:
            kind = requirement.kind
            if requirement.role not in counts and kind in (RoleKind.ADJUSTABLE, RoleKind.OPTIONAL):
                counts[requirement.role] = requirement.min
        return replace(self, counts=counts)


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


@dataclass
class RoleSpec(SolverRole):
    """One role of the team (a role with count 0 is not part of it)."""

    component: int = 0
    defaults: list[tuple[PoolModel, str]] = field(default_factory=list)


@dataclass(frozen=True)
class Fixed:
    """A chosen (or filled) instance: ``role#ordinal`` runs `model`."""

    role: str
    ordinal: int
    model: PoolModel


@dataclass(frozen=True)
class Clashes:
    """The clashes of one instance with the fixed choices, by model ref and provider:
    the first fixed item that clashes, with its reason (the one place the rule "distinct
    within a role; no shared model across an ``exclude_models_of`` link" is written)."""

    by_ref: dict[str, tuple[int, str]]
    by_provider: dict[str, tuple[int, str]]

    def reason(self, model: PoolModel) -> str | None:
        """Why `model` clashes with a fixed instance, or None."""
        if not self.by_ref and not self.by_provider:
            return None
        hit = self.by_ref.get(model.ref)
        other = self.by_provider.get(model.provider_id)
        if other is not None and (hit is None or other[0] < hit[0]):
            hit = other
        return None if hit is None else hit[1]


class Team:
    """A profile's team on one host: roles, candidate lists, domains and solvers."""

    def __init__(self, query: TeamQuery) -> None:
        check_entry_mode(query.host, query.entry_mode)
        self.profile = query.profile
        self.pool = query.pool
        self.host = query.host
        self.entry_mode = query.entry_mode
        self.counts = role_counts_for(query.profile, query.counts)
        self.roles: dict[str, RoleSpec] = {}
        for name, count in self.counts.items():
            if count == 0 or (name == LEADER and self.entry_mode == CURRENT_SESSION):
                continue
            requirement = self.profile.role(name)
            self.roles[name] = RoleSpec(
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
        pool = self.pool
        for role in self.roles.values():
            role.defaults = query.scopes.candidates(role.name, pool, self.host.native_provider)
            named = {m.ref for m, _ in role.defaults} | _chosen_refs(query, role.name)
            available = pool.available_refs(role.name, self.host, self.entry_mode)
            role.domain = pool.named_domain(available, named)
        # Everything else follows from the registry, the roles and their defaults and
        # domains: built once and shared by every pool on the same provider specs (the
        # domains are the registry's own frozensets, identical while availability is;
        # the shared core holds them, so their ids are not reused while it lives).
        shape = (
            "resolver-team-core",
            id(self.profile),
            self.entry_mode,
            tuple(
                (
                    r.name,
                    r.count,
                    r.distinct,
                    r.excludes,
                    id(r.domain),
                    tuple(m.ref for m, _ in r.defaults),
                )
                for r in self.roles.values()
            ),
        )
        core = pool.shared_memo(shape, lambda: TeamCore(self))
        self.core = core
        self.solvers = core.solvers

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

    def cli_run(self, role: str, provider_id: str) -> bool:
        """Whether `role` runs `provider_id`'s models through its CLI (one verdict for all)."""
        return choose_runner(role, provider_id, self.host, self.entry_mode) == CLI_WRAPPER

    def candidates(self, role: str, ordinal: int) -> Iterator[tuple[PoolModel, str | None]]:
        """Defaults rotated so instance `ordinal` starts at default `ordinal`, then the pool.

        An iterator: filling an instance usually stops at the first few candidates.
        """
        spec = self.roles[role]
        defaults: list[tuple[PoolModel, str | None]] = list(spec.defaults)
        if defaults:
            shift = (ordinal - 1) % len(defaults)
            defaults = defaults[shift:] + defaults[:shift]
        pool_models = self.core.rows(role).models
        return itertools.chain(defaults, zip(pool_models, itertools.repeat(None)))

    def instances(self) -> list[tuple[str, int]]:
        return [(r.name, n) for r in self.roles.values() for n in range(1, r.count + 1)]

    def clashes(self, fixed: Sequence[Fixed], role: str, ordinal: int) -> Clashes:
        """The clash rule for `role#ordinal` against the fixed instances, indexed once."""
        spec = self.roles[role]
        by_ref: dict[str, tuple[int, str]] = {}
        by_provider: dict[str, tuple[int, str]] = {}
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
        return Clashes(by_ref, by_provider)

    def usage(self, fixed: Sequence[Fixed], solver: Solver) -> dict[str, int]:
        return solver.usage((f.role, f.model.ref) for f in fixed)

    def feasible(self, fixed: Sequence[Fixed]) -> bool:
        """Exact: can these (consistent, available) fixed choices be completed?"""
        return all(
            solver.feasible(solver.state_dict(self.usage(fixed, solver)))
            for solver in self.solvers.values()
        )


class TeamCore:
    """What a team derives from its pool's registry, roles, defaults and domains.

    Shared by every pool on the same provider specs, so a step whose availability and
    answers match an earlier step's reuses the pass over the pool and the solvers'
    decided states. ``width``: the number of providers (a model class's code is
    ``mask * width + provider index``).
    """

    def __init__(self, team: Team) -> None:
        pool = team.pool
        self.anchors = (team.profile, *(r.domain for r in team.roles.values()))
        index = {p.id: i for i, p in enumerate(pool.providers)}
        # Every model's provider index by ref (the solvers' model classes start here).
        provider_of_ref: dict[str, int] = pool.shared_memo(
            "resolver-provider-of-ref", lambda: {m.ref: index[m.provider_id] for m in pool.models()}
        )
        self.provider_of_ref = provider_of_ref

        def provider_of_unknown(ref: str) -> int:
            return index[pool.resolve(ref).provider_id]

        self.solvers: dict[int, Solver] = {}
        for component in sorted({r.component for r in team.roles.values()}):
            members = [r for r in team.roles.values() if r.component == component]
            self.solvers[component] = Solver(members, provider_of_ref, provider_of_unknown)
        self.width = max(1, len(pool.providers))
        self._pool = pool
        self._roles = dict(team.roles)
        self._rows: dict[str, RoleRows] = {}

    def rows(self, role: str) -> RoleRows:
        """The role's pool models and their classes (built on first use)."""
        found = self._rows.get(role)
        if found is None:
            found = self._rows[role] = RoleRows(self, self._roles[role])
        return found

    def klass(self, code: int) -> tuple[int, int]:
        """A class code of `RoleRows.classes` as ``(provider index, availability mask)``."""
        return code % self.width, code // self.width


class RoleRows:
    """One role's pool models after its defaults, column by column (built on first use,
    every pass by `map`/`zip`: a big pool has ten thousand models per role).

    ``classes``: each model's class code (`TeamCore.klass`; a mask without the role's
    bit: not in its domain); ``class_set``: the domain's classes, each once;
    ``segments`` / ``unavailable``: ``(provider id, start, end)`` runs of `models`, per
    provider / not in the domain.
    """

    def __init__(self, core: TeamCore, role: RoleSpec) -> None:
        listed = core._pool.list(role.name)
        default_refs = {m.ref for m, _ in role.defaults}
        if default_refs:
            keep = map(operator.not_, map(default_refs.__contains__, map(_REF, listed)))
            models = list(itertools.compress(listed, keep))
        else:
            models = listed
        refs = list(map(_REF, models))
        self.models = models
        self.refs = refs
        masks = core.solvers[role.component].members
        provs = list(map(core.provider_of_ref.__getitem__, refs))
        # A class as one int (ints are not tracked by the garbage collector; ten
        # thousand tuples per role are).
        self.classes = list(
            map(
                operator.add,
                map(
                    operator.mul,
                    map(masks.get, refs, itertools.repeat(0)),
                    itertools.repeat(core.width),
                ),
                provs,
            )
        )
        width = core.width
        self.class_set = [k for k in dict.fromkeys(self.classes) if (k // width) & role.bit]
        present = list(map(role.domain.__contains__, refs))
        providers = core._pool.providers
        self.segments: list[tuple[str, int, int]] = []
        self.unavailable: list[tuple[str, int, int]] = []
        self._span: dict[str, tuple[int, int]] = {}
        begin = 0
        for provider, group in itertools.groupby(provs):
            stop = begin + len(list(group))
            provider_id = providers[provider].id
            self.segments.append((provider_id, begin, stop))
            self._span[provider_id] = (begin, stop)
            if not all(present[begin:stop]):
                self.unavailable.extend(_missing_runs(provider_id, present, begin, stop))
            begin = stop

    def position(self, model: PoolModel) -> int | None:
        """Where `model` is in `models` (None: not there)."""
        span = self._span.get(model.provider_id)
        if span is None:
            return None
        try:
            return self.refs.index(model.ref, *span)
        except ValueError:
            return None


_REF = operator.attrgetter("ref")


def _missing_runs(
    provider_id: str, present: Sequence[bool], begin: int, stop: int
) -> list[tuple[str, int, int]]:
    """The runs of `begin..stop` whose models are not in the domain."""
    if not any(present[begin:stop]):
        return [(provider_id, begin, stop)]
    runs: list[tuple[str, int, int]] = []
    i = begin
    for there, group in itertools.groupby(present[begin:stop]):
        n = len(list(group))
        if not there:
            runs.append((provider_id, i, i + n))
        i += n
    return runs


# Teams are kept per pool (one step resolves the chosen team, then the next prompt's
# options, on the same pool), as building one walks the whole pool per role. The cache
# lives on the pool itself: a weak-keyed side table would be kept alive by the team's
# own reference to its pool.


def _chosen_refs(query: TeamQuery, role: str) -> set[str]:
    """The refs a person chose for `role` (an unknown one is refused later, by name)."""
    refs: set[str] = set()
    for ref in query.models.get(role, ()):
        try:
            refs.add(query.pool.lookup(ref).ref)
        except UsageError:
            continue
    return refs


def team_of(query: TeamQuery) -> Team:
    """The team of `query` on its pool: built on first use, then reused."""
    try:
        counts = frozenset(query.counts.items())
    except TypeError:  # an unhashable count: the build refuses it with a clear error
        return Team(query)
    # Identity keys: the cached team holds its profile, scopes and host, so their ids
    # cannot be reused by other objects while it lives.
    key = (
        "resolver-team",
        id(query.profile),
        counts,
        id(query.scopes),
        id(query.host),
        query.entry_mode,
    )
    return query.pool.memo(key, lambda: Team(query))
