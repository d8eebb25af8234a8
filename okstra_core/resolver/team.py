"""The team model: a profile's role instances on one host, their candidates and rules.

A `Team` is built once per query shape (profile, counts, scopes, host, entry mode) and
pool, and cached on the pool (a pool lives for one wizard step). It holds each role's
default candidates, pool order and domain (its available refs), the one clash rule
between two chosen instances, and one `Solver` per linked group of roles.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from ..binding import choose_runner
from ..catalog.models import LEADER
from ..pool import Availability, PoolModel
from .query import TeamQuery, check_entry_mode, role_counts_for
from .solver import Solver, SolverRole


@dataclass
class RoleSpec:
    """One role of the team (a role with count 0 is not part of it)."""

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

    def solver_role(self) -> SolverRole:
        return SolverRole(
            self.name,
            self.bit,
            self.count,
            self.distinct,
            self.excludes,
            self.related,
            self.related_mask,
            self.domain,
        )


@dataclass(frozen=True)
class Fixed:
    """A chosen (or filled) instance: ``role#ordinal`` runs `model`."""

    role: str
    ordinal: int
    model: PoolModel


@dataclass(frozen=True)
class Clashes:
    """The clashes of one instance with the fixed choices, by model ref and provider.

    Each entry keeps the first fixed item (in the fixed order) that clashes, with its
    reason: the one place the rule "distinct within a role; no shared model across an
    ``exclude_models_of`` link" is written.
    """

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
            if count == 0 or (name == LEADER and self.entry_mode == "current-session"):
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
            role.defaults = query.scopes.candidates(role.name, pool)
            role.domain = pool.available_refs(role.name, self.host, self.entry_mode)
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
        for role in self.roles.values():
            role.pool_models = core.pool_models[role.name]
        self.provider_index = core.provider_index
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

    def solver_of(self, role: str) -> Solver:
        return self.solvers[self.roles[role].component]

    def availability(self, model: PoolModel, role: str) -> Availability:
        return self.pool.availability(model.ref, role, self.host, self.entry_mode)

    def cli_run(self, role: str, provider_id: str) -> bool:
        """Whether `role` runs `provider_id`'s models through its CLI (one verdict for all)."""
        return choose_runner(role, provider_id, self.host, self.entry_mode) == "cli-wrapper"

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

    def clash(
        self, fixed: Sequence[Fixed], role: str, ordinal: int, model: PoolModel
    ) -> str | None:
        """Why `model` for `role#ordinal` clashes with another fixed instance, or None."""
        return self.clashes(fixed, role, ordinal).reason(model)

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

    Shared by every pool on the same provider specs (`ModelPool.shared_memo`), so a
    wizard step whose availability and answers so far match an earlier step's reuses
    the pass over the pool and the solvers' decided states.

    Attributes:
        pool_models: each role's pool models that are not among its defaults.
        classes: for each role, aligned with `pool_models`: the model's class
            ``(provider index, availability mask)`` in its solver, or None when the
            model is not in the role's domain (unavailable for it).
        refs: for each role, the refs of `pool_models`.
        segments: for each role, ``(provider id, start, end)`` runs of `pool_models`.
        position: for each role, ref → index in `pool_models`.
        solvers: one per linked group of roles.
    """

    def __init__(self, team: Team) -> None:
        pool = team.pool
        self.anchors = (team.profile, *(r.domain for r in team.roles.values()))
        self.provider_index = {p.id: i for i, p in enumerate(pool.providers)}
        index = self.provider_index
        # Every model's provider index by ref (the solvers' model classes start here).
        provider_of_ref: dict[str, int] = pool.shared_memo(
            "resolver-provider-of-ref",
            lambda: {m.ref: index[m.provider_id] for m in pool.models()},
        )

        def provider_of_unknown(ref: str) -> int:
            return index[pool.resolve(ref).provider_id]

        self.solvers: dict[int, Solver] = {}
        for component in sorted({r.component for r in team.roles.values()}):
            members = [r.solver_role() for r in team.roles.values() if r.component == component]
            self.solvers[component] = Solver(members, provider_of_ref, provider_of_unknown)
        self.pool_models: dict[str, list[PoolModel]] = {}
        self.classes: dict[str, list[tuple[int, int] | None]] = {}
        self.segments: dict[str, list[tuple[str, int, int]]] = {}
        self.position: dict[str, dict[str, int]] = {}
        self.refs: dict[str, list[str]] = {}
        self.class_set: dict[str, list[tuple[int, int]]] = {}
        self.unavailable: dict[str, list[tuple[str, int, int]]] = {}
        for role in team.roles.values():
            default_refs = {m.ref for m, _ in role.defaults}
            models = [m for m in pool.list(role.name) if m.ref not in default_refs]
            self.pool_models[role.name] = models
            self.refs[role.name] = [m.ref for m in models]
            klass = self.solvers[role.component].klass
            domain = role.domain
            classes = [klass(m.ref) if m.ref in domain else None for m in models]
            self.classes[role.name] = classes
            self.class_set[role.name] = [k for k in dict.fromkeys(classes) if k is not None]
            segments: list[tuple[str, int, int]] = []
            unavailable: list[tuple[str, int, int]] = []
            start = 0
            runs = itertools.groupby(
                zip((m.provider_id for m in models), (k is None for k in classes), strict=True)
            )
            for (provider_id, missing), run in runs:
                end = start + sum(1 for _ in run)
                if missing:
                    unavailable.append((provider_id, start, end))
                start = end
            start = 0
            for provider_id, group in itertools.groupby(models, _provider_id):
                end = start + sum(1 for _ in group)
                segments.append((provider_id, start, end))
                start = end
            self.segments[role.name] = segments
            self.unavailable[role.name] = unavailable
            self.position[role.name] = {m.ref: i for i, m in enumerate(models)}


def _provider_id(model: PoolModel) -> str:
    return model.provider_id


# Teams are kept per pool: a wizard step resolves the chosen team (to drop models that
# no longer fit), then computes the next prompt's options (and the app's confirm screen
# resolves again) — all on one step's pool, with the same profile, counts, scopes and
# host. Building a team walks the whole pool once per role (availability, domains,
# model classes), so it is built once per pool and reused. A pool lives for one step
# ("availability cached for one step"), so does its team; the solvers' memoised states
# stay valid for the team's life (they depend on the team, not on the choices). The
# cache lives on the pool itself: a weak-keyed side table would be kept alive by the
# team's own reference to its pool.


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
