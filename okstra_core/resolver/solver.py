"""Exact feasibility of one linked group of roles, over model classes.

Knows nothing of profiles, pools or hosts: it gets the roles of one component (linked by
``exclude_models_of``) with counts, distinctness, links and domains, and each ref's
provider. A state is a multiset of model classes ``(provider, available-to mask,
used-by mask)``; models of one class are interchangeable, so a state decides every
assignment it stands for. The search takes the most constrained role first, prunes with
per-role and per-pair counting (Hall-type) bounds, and remembers decided states.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence

from ..records import dataclass

Key = tuple[int, int, int]  # (provider index, availability mask, usage mask)
State = tuple[tuple[Key, int], ...]
Move = tuple[int, Key]  # (role index within the solver, the class a model is taken from)
Path = tuple[Move, ...]

_DECIDED_LIMIT = 100_000  # decided states kept per solver


@dataclass
class SolverRole:
    """What the solver needs of one role of the team (set up before a solver reads it)."""

    name: str
    bit: int
    count: int
    distinct: str  # "model" | "provider"
    excludes: frozenset[str]  # roles this role may not share models with (as declared)
    related: frozenset[str] = frozenset()  # symmetric closure of `excludes`, in the team
    related_mask: int = 0
    domain: frozenset[str] = frozenset()  # the refs available to the role


@dataclass(frozen=True)
class Shortfall:
    """A counting bound a completion cannot meet: ``role rule: required=N, available=M``.

    ``rule``: ``available-models`` (one instance, no usable model), ``distinct-model``,
    ``distinct-provider`` or ``exclude-models-of(<roles>)``; ``providers``: ``available``
    counts providers, not models.
    """

    role: str
    rule: str
    required: int
    available: int
    providers: bool = False

    @property
    def line(self) -> str:
        return f"{self.role} {self.rule}: required={self.required}, available={self.available}"


class Solver:
    """Exact feasibility of one component of the team."""

    def __init__(
        self,
        roles: Sequence[SolverRole],
        provider_of: Mapping[str, int],
        provider_of_unknown: Callable[[str], int],
    ) -> None:
        self.roles = list(roles)
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
        self.provider_of = provider_of
        self.provider_of_unknown = provider_of_unknown
        providers = map(self.provider_of.__getitem__, members)
        self.base: dict[Key, int] = dict(
            Counter(zip(providers, members.values(), itertools.repeat(0)))
        )
        self.ok: dict[State, Path] = {}
        self.failed: set[State] = set()

    # -- states

    def usage(self, used_by: Iterable[tuple[str, str]]) -> dict[str, int]:
        """`(role, ref)` pairs of the fixed choices → the usage mask of each ref."""
        used: dict[str, int] = {}
        for role, ref in used_by:
            i = self.index.get(role)
            if i is not None:
                used[ref] = used.get(ref, 0) | self.bits[i]
        return used

    def state_dict(self, usage: Mapping[str, int]) -> dict[Key, int]:
        counts = dict(self.base)
        for ref, used in usage.items():
            klass = self.klass(ref)
            if klass is None:
                # Outside every domain here: it only marks a provider as used.
                klass = (self.provider_of_unknown(ref), 0)
            else:
                _take(counts, (klass[0], klass[1], 0))
            key = (klass[0], klass[1], used)
            counts[key] = counts.get(key, 0) + 1
        return counts

    def klass(self, ref: str) -> tuple[int, int] | None:
        """The class of a model in some domain of the component, else None."""
        avail = self.members.get(ref)
        return None if avail is None else (self.provider_of[ref], avail)

    def key_of(self, usage: Mapping[str, int], ref: str) -> Key:
        klass = self.klass(ref)
        if klass is None:
            klass = (self.provider_of_unknown(ref), 0)
        return (klass[0], klass[1], usage.get(ref, 0))

    def after(self, counts: Mapping[Key, int], role: str, key: Key) -> dict[Key, int]:
        """The state once `role` takes a model from `key`."""
        out = dict(counts)
        _move(out, key, self.bits[self.index[role]])
        return out

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

    def shortfalls(self, counts: Mapping[Key, int]) -> list[Shortfall]:
        """Counting bounds every completion must meet and this state does not."""
        lines: list[Shortfall] = []
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
            lines.append(
                Shortfall(
                    role.name,
                    label,
                    role.count,
                    have + cap,
                    providers=self.by_provider[i] and label.startswith("distinct"),
                )
            )
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
                    Shortfall(
                        self.roles[i].name,
                        f"exclude-models-of({self.roles[j].name})",
                        self.wanted[i] + self.wanted[j],
                        placed + cap,
                    )
                )
        return lines

    # -- search

    def feasible(self, counts: Mapping[Key, int]) -> bool:
        return self.solve(freeze(counts)) is not None

    def solve(self, state: State) -> Path | None:
        """The moves that complete `state`, or None when no completion exists."""
        # One look-up each: a solver is shared by the steps (and threads) of a process.
        found = self.ok.get(state)
        if found is not None:
            return found
        if state in self.failed:
            return None
        path = self._search(dict(state))
        if len(self.ok) + len(self.failed) >= _DECIDED_LIMIT:
            # A solver lives as long as its team core, shared by many steps: bounded.
            self.ok.clear()
            self.failed.clear()
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
            rest = self.solve(freeze(nxt))
            if rest is not None:
                return ((best, key), *rest)
        return None

    def choice_feasible(
        self, counts: Mapping[Key, int], base: Path | None, role: str, key: Key
    ) -> bool:
        """Exact: does `counts` stay completable when `role` takes from `key`?

        `base` is a completion of `counts` (None: none). Replaying it with one of the
        role's own moves dropped is a completion when valid; only without one, search.
        """
        if base is None:
            return False
        i = self.index[role]
        after = self.after(counts, role, key)
        drops = [j for j, (r, _) in enumerate(base) if r == i]
        drops.sort(key=lambda j: base[j][1] != key)
        if any(self._replay(after, base, j) for j in drops):
            return True
        return self.solve(freeze(after)) is not None

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


def freeze(counts: Mapping[Key, int]) -> State:
    return tuple(sorted(counts.items()))
