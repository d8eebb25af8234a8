"""Exactness of the resolver against an exhaustive brute-force oracle.

Random small pools (≤6 models over ≤3 providers, random role support, CLIs and
disabled providers, terminal or native host) and random profiles (≤3 roles, counts ≤3,
random `distinct` and `exclude_models_of`). The oracle enumerates every assignment of
every role instance with itertools.product and checks the constraints from first
principles (it does not call the pool's availability).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from resolver_helpers import CLAUDE_CODE, TERMINAL, make_pool, model, profile, provider, role

from okstra_core.catalog.models import LEADER, HostSpec, Profile, ProviderSpec
from okstra_core.defaults import DefaultScopes
from okstra_core.errors import AssignmentResolutionError
from okstra_core.pool import ModelPool
from okstra_core.resolver import (
    TeamQuery,
    model_option_rows,
    model_options,
    resolve_assignments,
    role_instances,
)

ROLE_NAMES = ("r0", "r1", "r2")


@dataclass
class Case:
    providers: list[ProviderSpec]
    clis: set[str]
    disabled: tuple[str, ...]
    host: HostSpec
    profile: Profile
    counts: dict[str, int]

    def pool(self) -> ModelPool:
        return make_pool(self.providers, self.clis, self.disabled)


@st.composite
def cases(draw: st.DrawFn) -> Case:
    n_roles = draw(st.integers(1, 3))
    names = ROLE_NAMES[:n_roles]
    reqs = []
    counts: dict[str, int] = {}
    for name in names:
        lo = draw(st.integers(0, 2))
        hi = draw(st.integers(max(lo, 1), 3))
        others = [o for o in names if o != name]
        # One draw per pair keeps cross-role constraints frequent (they make greedy fail).
        exclude = [o for o in others if draw(st.booleans())]
        reqs.append(
            role(
                name,
                lo=lo,
                hi=hi,
                distinct=draw(st.sampled_from(["model", "provider"])),
                exclude=exclude,
            )
        )
        counts[name] = draw(st.integers(lo, hi))
    # Keep the brute force small: at most 6 instances including the leader.
    total = 1 + sum(counts.values())
    while total > 6:
        name = max(counts, key=lambda n: counts[n])
        req = next(r for r in reqs if r.role == name)
        if counts[name] <= req.min:
            reqs = [
                r
                if r.role != name
                else role(name, lo=0, hi=r.max, distinct=r.distinct, exclude=r.exclude_models_of)
                for r in reqs
            ]
        counts[name] -= 1
        total -= 1
    all_roles = [LEADER, *names]
    n_providers = draw(st.integers(1, 3))
    providers: list[ProviderSpec] = []
    remaining = draw(st.integers(n_providers, 6))
    for p in range(n_providers):
        n_models = (
            remaining - (n_providers - p - 1)
            if p == n_providers - 1
            else draw(st.integers(1, remaining - (n_providers - p - 1)))
        )
        remaining -= n_models
        proles = [r for r in all_roles if draw(st.integers(0, 4))] or [all_roles[0]]
        models = []
        for m in range(n_models):
            # A provider file's rules: a model's roles and defaults are roles it has.
            mroles = [] if draw(st.booleans()) else [r for r in proles if draw(st.booleans())]
            dflt = [r for r in (mroles or proles) if draw(st.booleans())]
            models.append(model(f"m{m}", roles=mroles, default_for=dflt))
        providers.append(provider(f"p{p}", models, roles=proles))
    clis = {p.cli for p in providers if draw(st.booleans()) or draw(st.booleans())}
    disabled = tuple(p.id for p in providers if draw(st.integers(0, 5)) == 0)
    host = draw(st.sampled_from([TERMINAL, CLAUDE_CODE]))
    role_counts = {r.role: counts[r.role] for r in reqs if r.min != r.max}
    return Case(providers, clis, disabled, host, profile(*reqs), role_counts)


class Oracle:
    """Every complete valid assignment, by brute force over all instances."""

    def __init__(self, case: Case) -> None:
        self.case = case
        self.instances = role_instances(case.profile, case.counts)
        models = [(p, m) for p in case.providers for m in p.models]
        domains = [
            [f"{p.id}/{m.id}" for p, m in models if self.usable(p, m, r)] for r, _ in self.instances
        ]
        self.provider_of = {f"{p.id}/{m.id}": p.id for p, m in models}
        self.solutions = [s for s in itertools.product(*domains) if self.valid(s)]

    def usable(self, p: ProviderSpec, m, r: str) -> bool:  # type: ignore[no-untyped-def]
        if r not in p.roles or (m.roles and r not in m.roles) or p.id in self.case.disabled:
            return False
        native = (
            r != LEADER
            and self.case.host.native_sessions
            and self.case.host.native_provider == p.id
        )
        return native or p.cli in self.case.clis

    def valid(self, sol: tuple[str, ...]) -> bool:
        by_role: dict[str, list[str]] = {}
        for (r, _), ref in zip(self.instances, sol, strict=True):
            by_role.setdefault(r, []).append(ref)
        for req in self.case.profile.roles:
            refs = by_role.get(req.role, [])
            keys = [self.provider_of[x] for x in refs] if req.distinct == "provider" else refs
            if len(set(keys)) != len(keys):
                return False
            for other in req.exclude_models_of:
                if set(refs) & set(by_role.get(other, [])):
                    return False
        return True

    def completable(self, fixed: dict[tuple[str, int], str]) -> bool:
        index = {inst: i for i, inst in enumerate(self.instances)}
        return any(all(s[index[k]] == v for k, v in fixed.items()) for s in self.solutions)


def check_plan(case: Case, oracle: Oracle, plan) -> None:  # type: ignore[no-untyped-def]
    got = [(a.role, a.ordinal) for a in plan.assignments]
    assert got == oracle.instances
    sol = tuple(a.model_ref for a in plan.assignments)
    assert sol in oracle.solutions


def candidate_order(case: Case, pool: ModelPool, r: str, n: int) -> list[str]:
    defaults = [m.ref for m in pool.list(r) if r in m.default_for]
    home = case.host.native_provider
    if home is not None and r == "leader":
        # The lead defaults to the host's own provider first (the report writer does not).
        own = [ref for ref in defaults if ref.split("/")[0] == home]
        own = own or [m.ref for m in pool.list(r) if m.provider_id == home][:1]
        defaults = own + [ref for ref in defaults if ref not in own]
    if defaults:
        k = (n - 1) % len(defaults)
        defaults = defaults[k:] + defaults[:k]
    return defaults + [m.ref for m in pool.list(r) if m.ref not in defaults]


SETTINGS = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@SETTINGS
@given(cases())
def test_resolve_matches_oracle_and_fill_is_first_completable(case: Case) -> None:
    oracle = Oracle(case)
    pool = case.pool()
    try:
        plan = resolve_assignments(
            case.profile, case.counts, {}, DefaultScopes(), pool, case.host, "spawn-process"
        )
    except AssignmentResolutionError as exc:
        assert not oracle.solutions, "resolver found no team but one exists"
        assert exc.candidates or exc.constraints
        return
    assert oracle.solutions, "resolver returned a team the oracle says cannot exist"
    check_plan(case, oracle, plan)
    # Determinism: each instance takes the first candidate that keeps completion possible.
    fixed: dict[tuple[str, int], str] = {}
    for a in plan.assignments:
        order = candidate_order(case, pool, a.role, a.ordinal)
        first = next(
            ref for ref in order if oracle.completable({**fixed, (a.role, a.ordinal): ref})
        )
        assert a.model_ref == first
        fixed[(a.role, a.ordinal)] = a.model_ref


@SETTINGS
@given(cases(), st.data())
def test_model_options_selectable_iff_extendable(case: Case, data: st.DataObject) -> None:
    oracle = Oracle(case)
    pool = case.pool()
    step = data.draw(st.sampled_from(oracle.instances))
    # A random prefix of explicit choices (any pool model of the role, valid or not).
    prefix: dict[str, list[str]] = {}
    fixed: dict[tuple[str, int], str] = {}
    for inst in oracle.instances[: oracle.instances.index(step)]:
        choices = [m.ref for m in pool.list(inst[0])]
        if not choices:
            break
        ref = data.draw(st.sampled_from(choices))
        prefix.setdefault(inst[0], []).append(ref)
        fixed[inst] = ref
    if len(fixed) < oracle.instances.index(step):
        return  # a role without any model: no prefix reaches this step
    query = TeamQuery(
        profile=case.profile,
        counts=case.counts,
        models=prefix,
        scopes=DefaultScopes(),
        pool=pool,
        host=case.host,
        entry_mode="spawn-process",
    )
    options = model_options(query, step[0], step[1])
    assert [o.model.ref for o in options] == candidate_order(case, pool, *step)
    selectable = {o.model.ref for o in options if o.disabled_reason is None}
    expected = {m.ref for m in pool.list(step[0]) if oracle.completable({**fixed, step: m.ref})}
    assert selectable == expected
    for o in options:
        assert (o.disabled_reason is None) or o.disabled_reason.strip()


@SETTINGS
@given(cases(), st.data())
def test_explicit_prefix_is_kept_or_explained(case: Case, data: st.DataObject) -> None:
    oracle = Oracle(case)
    pool = case.pool()
    prefix: dict[str, list[str]] = {}
    fixed: dict[tuple[str, int], str] = {}
    for r, n in oracle.instances:
        if r == LEADER or not pool.list(r) or not data.draw(st.booleans()):
            continue
        if len(prefix.get(r, [])) != n - 1:
            continue
        ref = data.draw(st.sampled_from([m.ref for m in pool.list(r)]))
        prefix.setdefault(r, []).append(ref)
        fixed[(r, n)] = ref
    try:
        plan = resolve_assignments(
            case.profile, case.counts, prefix, DefaultScopes(), pool, case.host, "spawn-process"
        )
    except AssignmentResolutionError:
        assert not oracle.completable(fixed)
        return
    assert oracle.completable(fixed)
    check_plan(case, oracle, plan)
    by_instance = {(a.role, a.ordinal): a for a in plan.assignments}
    for inst, ref in fixed.items():
        assert by_instance[inst].model_ref == ref
        assert by_instance[inst].provenance == "chosen"


@SETTINGS
@given(cases(), st.data())
def test_steps_sharing_a_team_core_stay_exact(case: Case, data: st.DataObject) -> None:
    """Steps on the same provider specs share the team's core (its candidates, model
    classes and the solvers' decided states) and the pool's option verdicts are
    decided per model class: every step still agrees with the brute-force oracle,
    when the answers change between steps and when a CLI goes away."""
    clis = sorted(case.clis)
    for _ in range(3):
        # Each step: a fresh pool (as a wizard step builds) on the very same specs,
        # with some CLIs possibly removed since the step before.
        kept = data.draw(st.sets(st.sampled_from(clis))) if clis else set()
        step_case = Case(case.providers, kept, case.disabled, case.host, case.profile, case.counts)
        oracle = Oracle(step_case)
        pool = step_case.pool()
        step = data.draw(st.sampled_from(oracle.instances))
        prefix: dict[str, list[str]] = {}
        fixed: dict[tuple[str, int], str] = {}
        for inst in oracle.instances[: oracle.instances.index(step)]:
            choices = [m.ref for m in pool.list(inst[0])]
            if not choices:
                break
            ref = data.draw(st.sampled_from(choices))
            prefix.setdefault(inst[0], []).append(ref)
            fixed[inst] = ref
        if len(fixed) < oracle.instances.index(step):
            continue
        query = TeamQuery(
            profile=case.profile,
            counts=case.counts,
            models=prefix,
            scopes=DefaultScopes(),
            pool=pool,
            host=case.host,
            entry_mode="spawn-process",
        )
        rows = model_option_rows(query, step[0], step[1])
        assert rows.refs == [m.ref for m in rows.models]
        assert rows.refs == candidate_order(step_case, pool, *step)
        expected = {m.ref for m in pool.list(step[0]) if oracle.completable({**fixed, step: m.ref})}
        got = {ref for ref, why in zip(rows.refs, rows.reasons, strict=True) if why is None}
        assert got == expected
        for model_, why in zip(rows.models, rows.reasons, strict=True):
            verdict = pool.availability(model_.ref, step[0], case.host, "spawn-process")
            if not verdict.available:
                # An unavailable model says why, exactly as the pool does.
                assert why == verdict.reason
            assert why is None or why.strip()


def test_oracle_is_not_vacuous() -> None:
    """Sanity: the generated cases include both solvable and unsolvable teams."""
    seen = {True: 0, False: 0}

    @settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
    @given(cases())
    def probe(case: Case) -> None:
        seen[bool(Oracle(case).solutions)] += 1

    probe()
    assert seen[True] > 10 and seen[False] > 10, seen


pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
