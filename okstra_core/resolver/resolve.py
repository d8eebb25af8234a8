"""Resolution, option states and feasibility of a team query.

Every answer is exact: an option is selectable, a count offered, a team declared
possible exactly when a complete valid team extends the choices made so far.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from ..binding import Binding, bind
from ..catalog.models import LEADER, RoleRequirement
from ..errors import AssignmentResolutionError, OkstraError, UsageError
from ..pool import PoolModel
from ..records import dataclass, fields_of
from ..vocabulary import CURRENT_SESSION, CURRENT_SESSION_RUNNER
from .solver import Key, Path, Shortfall, Solver, freeze
from .team import Fixed, RoleRows, RoleSpec, Team, TeamQuery, duty_of, team_of

POOL_PROVENANCE = "default:pool"
CURRENT_SESSION_PROVENANCE = "current-session"


@dataclass(frozen=True)
class ResolvedAssignment:
    """One role instance bound to a model.

    ``provenance``: ``chosen``, ``default:<scope>`` (a default candidate),
    ``default:pool`` (the first completable pool model when no default fits) or
    ``current-session``; the wizard may override it (``reused:…``, ``converted:…``).
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
    entry_mode: str
    provenance: str


@dataclass(frozen=True)
class ResolvedTeam:
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


@dataclass(frozen=True)
class Blocker:
    """Why no complete team exists: ``lines`` as ``role rule: required=N, available=M``
    (or an earlier choice that no longer fits), and ``advice``, the same said for a
    person with what to install or enable."""

    lines: tuple[str, ...]
    advice: str


def _resolve_explicit(
    team: Team, role_models: Mapping[str, Sequence[str]]
) -> list[tuple[str, int, PoolModel]]:
    """Resolve explicit choices to pool models, refusing unusable roles and counts."""
    out: list[tuple[str, int, PoolModel]] = []
    for role, refs in role_models.items():
        if not refs:
            continue
        if role == LEADER and team.entry_mode == CURRENT_SESSION:
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
    team: Team, explicit: Sequence[tuple[str, int, PoolModel]]
) -> tuple[list[Fixed], list[str]]:
    """Split explicit choices into valid fixed ones and failing-candidate lines."""
    valid: list[Fixed] = []
    failures: list[str] = []
    rank = {name: i for i, name in enumerate(team.counts)}
    ordered = sorted(explicit, key=lambda item: (rank.get(item[0], len(rank)), item[1]))
    for role, ordinal, model in ordered:
        verdict = team.availability(model, role)
        if verdict.available:
            reason = team.clashes(valid, role, ordinal).reason(model)
        else:
            reason = verdict.reason
        if reason is not None:
            failures.append(f"{role}#{ordinal} {model.ref}: {reason}")
        else:
            valid.append(Fixed(role, ordinal, model))
    return valid, failures


def _need(team: Team, shortfall: Shortfall) -> str:
    """A shortfall said for a person: what is needed and what there is."""
    role = shortfall.role
    domain = team.roles[role].domain if role in team.roles else frozenset()
    have = sorted({team.pool.resolve(ref).provider_id for ref in domain})
    if shortfall.providers:
        need = f"needs {shortfall.required} providers for {role} ({shortfall.rule})"
        there = (
            f"only {', '.join(have)} {'is' if len(have) == 1 else 'are'} available"
            if have
            else "none is available"
        )
    elif shortfall.rule.startswith("exclude-models-of"):
        others = shortfall.rule.partition("(")[2].rstrip(")")
        need = (
            f"needs {shortfall.required} models for {role} that {others} does not use "
            f"({shortfall.rule})"
        )
        there = f"only {shortfall.available} available"
    else:
        noun = "model" if shortfall.required == 1 else "models"
        rule = "" if shortfall.rule == "available-models" else f" ({shortfall.rule})"
        need = f"needs {shortfall.required} {noun} for {role}{rule}"
        there = f"only {shortfall.available} available" if shortfall.available else "none available"
    return f"{need}; {there}"


def _blocker(team: Team, shortfalls: Sequence[Shortfall]) -> Blocker:
    """Why no team: each unmet need, then each provider that would help, said once with
    why it cannot and the one command that fixes a missing CLI (demo providers: never a
    fix of their own)."""
    pool = team.pool
    missing: dict[str, str] = {}
    for shortfall in shortfalls:
        role = shortfall.role
        domain = team.roles[role].domain if role in team.roles else frozenset()
        have = {pool.resolve(ref).provider_id for ref in domain}
        for model in pool.list(role):
            provider = model.provider
            if (
                model.ref in domain
                or provider.id in missing
                or provider.id in have
                or provider.demo
            ):
                continue
            verdict = pool.availability(model.ref, role, team.host, team.entry_mode)
            if verdict.available:
                continue
            why = verdict.reason or "unavailable"
            if provider.install and pool.which(provider.cli) is None:
                why += f" — install: {provider.install}"
            missing[provider.id] = why
    advice = "; ".join(_need(team, s) for s in shortfalls)
    if missing:
        advice += ". To fix, install or enable: " + "; ".join(
            f"{p} ({why})" for p, why in missing.items()
        )
    return Blocker(tuple(s.line for s in shortfalls), advice)


def _unmet(team: Team, valid: Sequence[Fixed]) -> list[tuple[Solver, list[Shortfall]]]:
    """Each linked group of roles that cannot be completed, with its counting shortfalls."""
    unmet: list[tuple[Solver, list[Shortfall]]] = []
    for solver in team.solvers.values():
        counts = solver.state_dict(team.usage(valid, solver))
        if not solver.feasible(counts):
            unmet.append((solver, solver.shortfalls(counts)))
    return unmet


def _roles_and_total(solver: Solver) -> tuple[str, int]:
    return ", ".join(r.name for r in solver.roles), sum(r.count for r in solver.roles)


def _explain(team: Team, valid: Sequence[Fixed], failures: list[str]) -> AssignmentResolutionError:
    candidates = list(failures)
    constraints: list[str] = []
    fixed_keys = {(f.role, f.ordinal) for f in valid}
    for solver, shortfalls in _unmet(team, valid):
        names, total = _roles_and_total(solver)
        constraints.extend(s.line for s in shortfalls)
        if not shortfalls:
            constraints.append(
                f"{names} distinct+exclude-models-of: required={total} instances; "
                "every count fits on its own, but no combination of the available models "
                "satisfies all constraints together"
            )
        for role in solver.roles:
            free = [n for n in range(1, role.count + 1) if (role.name, n) not in fixed_keys]
            if not free:
                continue
            for model, _ in team.candidates(role.name, free[0]):
                verdict = team.availability(model, role.name)
                if not verdict.available:
                    candidates.append(f"{role.name}#{free[0]} {model.ref}: {verdict.reason}")
    return AssignmentResolutionError(candidates, constraints)


def _filled_roles(team: Team, query: TeamQuery) -> list[str]:
    """Roles with an instance the fill will take from the defaults."""
    return [r.name for r in team.roles.values() if len(query.models.get(r.name, ())) < r.count]


def resolve(query: TeamQuery) -> ResolvedTeam:
    """Resolve every role instance of the query's team (leader first, then profile order).

    Raises:
        UsageError: invalid counts, unknown roles/models, too many models for a role.
        OkstraError: a configured default is unavailable for a role the fill takes from
            its defaults.
        AssignmentResolutionError: no complete team exists (every failing candidate and
            unsatisfied constraint at once).
    """
    team = team_of(query)
    explicit = _resolve_explicit(team, query.models)
    query.scopes.validate(query.pool, query.host, query.entry_mode, _filled_roles(team, query))
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
        fixed.append(Fixed(role, ordinal, picked[0]))
        chosen[(role, ordinal)] = picked
    assignments: list[ResolvedAssignment] = []
    for role, count in team.counts.items():
        if role == LEADER and query.entry_mode == CURRENT_SESSION:
            assignments.append(_current_session_leader(query))
            continue
        for ordinal in range(1, count + 1):
            model, provenance = chosen[(role, ordinal)]
            assignments.append(
                ResolvedAssignment(
                    role=role,
                    ordinal=ordinal,
                    duty=duty_of(query.profile, role),
                    **fields_of(model, "provider_id model_id execution"),
                    model_ref=model.ref,
                    display_name=model.display,
                    binding=bind(model, role, query.host, query.entry_mode),
                    host_runtime=query.host.id,
                    entry_mode=query.entry_mode,
                    provenance=provenance,
                )
            )
    return ResolvedTeam(tuple(assignments), query.profile.dynamic_roles)


def _first_completable(
    team: Team, fixed: list[Fixed], role: str, ordinal: int
) -> tuple[PoolModel, str]:
    solver = team.solvers[team.roles[role].component]
    usage = team.usage(fixed, solver)
    counts = solver.state_dict(usage)
    base = solver.solve(freeze(counts))
    clashes = team.clashes(fixed, role, ordinal)
    for model, provenance in team.candidates(role, ordinal):
        if model.ref not in team.roles[role].domain:
            continue
        if clashes.reason(model) is not None:
            continue
        if solver.choice_feasible(counts, base, role, solver.key_of(usage, model.ref)):
            return model, provenance or POOL_PROVENANCE
    # Unreachable: the state before this instance was feasible, so some candidate is.
    raise AssertionError(f"no completable candidate for {role}#{ordinal}")


def _current_session_leader(query: TeamQuery) -> ResolvedAssignment:
    host = query.host
    provider = host.native_provider or ""
    ref = query.current_session_model or f"{provider}/current-session"
    model_id = ref.partition("/")[2] or "current-session"
    return ResolvedAssignment(
        role=LEADER,
        ordinal=1,
        duty=duty_of(query.profile, LEADER),
        provider_id=provider,
        model_ref=ref,
        model_id=model_id,
        display_name=f"{host.display_label} current session",
        execution="",
        binding=Binding(runner=CURRENT_SESSION_RUNNER, host_runtime=host.id, host_model_value=None),
        host_runtime=host.id,
        entry_mode=CURRENT_SESSION,
        provenance=CURRENT_SESSION_PROVENANCE,
    )


def blocker(query: TeamQuery) -> Blocker | None:
    """Why the query's team (its counts, chosen models) cannot be completed, or None.

    Exact, with unchosen counts as `role_counts_for` gives them (``query.smallest()``
    asks whether *some* choice of the open counts works). Raises `UsageError`.
    """
    team = team_of(query)
    valid, failures = _check_explicit(team, _resolve_explicit(team, query.models))
    if failures:
        lines = tuple(failures)
        return Blocker(lines, "earlier choice no longer fits: " + "; ".join(lines))
    shortfalls: list[Shortfall] = []
    for solver, found in _unmet(team, valid):
        names, total = _roles_and_total(solver)
        shortfalls += found or [Shortfall(names, "distinct+exclude-models-of", total, total - 1)]
    return _blocker(team, shortfalls) if shortfalls else None


def count_options(query: TeamQuery, role: str) -> list[tuple[int, str | None]]:
    """Every count of `role` (``min..max``) with why it is infeasible (None: feasible).

    Feasible exactly when a complete team has it, the counts chosen so far, the open
    counts at their minimum (fewer instances never hurt) and the other roles' models.
    A `UsageError` when `role` has no count to choose.
    """
    requirement = query.profile.role(role)
    if requirement is None or requirement.dynamic or requirement.min == requirement.max:
        raise UsageError(f"role {role!r} has no count to choose")
    others = {r: list(m) for r, m in query.models.items() if r != role}
    out: list[tuple[int, str | None]] = []
    for n in range(requirement.min, requirement.max + 1):
        counts = {**query.counts, role: n}
        found = blocker(replace(query, counts=counts, models=others).smallest())
        out.append((n, None if found is None else found.advice))
    return out


@dataclass(frozen=True)
class ModelOptionRows:
    """The options of a ``role-model`` step, column by column: ``reasons`` why each
    cannot be chosen (None: selectable), ``provenances`` its default scope (None for
    pool models); the first ``defaults`` rows are the role's default candidates, the
    rest its other pool models in registry order."""

    models: list[PoolModel]
    refs: list[str]
    reasons: list[str | None]
    provenances: list[str | None]
    defaults: int

    def states(self) -> list[OptionState]:
        return [
            OptionState(model=m, disabled_reason=r, provenance=p)
            for m, r, p in zip(self.models, self.reasons, self.provenances, strict=True)
        ]


def model_options(query: TeamQuery, role: str, ordinal: int) -> list[OptionState]:
    """The options of step ``role-model:<role>:<ordinal>``.

    The role's default candidates rotated so instance `ordinal` starts at default
    `ordinal`, then the rest of its pool. ``query.models`` is held fixed but this role's
    ordinals from `ordinal` on. An option is selectable exactly when a complete valid
    team extends it; otherwise it carries why. Raises `UsageError`.
    """
    return model_option_rows(query, role, ordinal).states()


def _instance(query: TeamQuery, team: Team, role: str, ordinal: int) -> RoleSpec:
    """The spec of the role whose instance `ordinal` is asked; refused when none."""
    spec = team.roles.get(role)
    if spec is None or not 1 <= ordinal <= spec.count:
        if role == LEADER and query.entry_mode == CURRENT_SESSION:
            raise UsageError("in current-session mode the leader takes no model")
        raise UsageError(f"the team has no instance {role}#{ordinal}")
    return spec


def _blocked(team: Team, spec: RoleSpec, valid: list[Fixed], failures: list[str]) -> str | None:
    """Why no option can be chosen whatever it is: an earlier choice that no longer fits,
    or another linked group of roles that cannot be completed (None: neither)."""
    if failures:
        return "no complete team: earlier choice " + "; ".join(failures)
    for component, solver in team.solvers.items():
        counts = solver.state_dict(team.usage(valid, solver))
        if component != spec.component and not solver.feasible(counts):
            lines = [s.line for s in solver.shortfalls(counts)] or ["roles cannot be completed"]
            return "no complete team: " + "; ".join(lines)
    return None


def _pool_rows(
    team: Team,
    role: str,
    table: RoleRows,
    counts: Mapping[Key, int],
    blocked: str | None,
    touched: set[int | None],
    completion: Callable[[Key], str | None],
    reason_of: Callable[[PoolModel], str | None],
) -> list[str | None]:
    """The reason of each of the role's pool models (None: selectable): one verdict per
    class for the models no fixed choice touches, the availability reason outside the
    domain (per provider when its CLI runs the role), the `touched` rows one by one."""
    core = team.core
    pool_models = table.models
    by_class: dict[int, str | None] = {}
    for code in table.class_set:
        key = (*core.klass(code), 0)
        if blocked is not None:
            by_class[code] = blocked
        elif counts.get(key, 0) > 0:
            by_class[code] = completion(key)
        # else every model of the class is used by a fixed choice: decided one by one.
    rows = list(map(by_class.get, table.classes))
    for provider_id, start, stop in table.unavailable:
        first = team.availability(pool_models[start], role).reason
        if team.cli_run(role, provider_id):
            rows[start:stop] = [first] * (stop - start)
        else:
            for i in range(start, stop):
                rows[i] = team.availability(pool_models[i], role).reason
    for row in touched:
        if row is not None:
            rows[row] = reason_of(pool_models[row])
    return rows


def model_option_rows(query: TeamQuery, role: str, ordinal: int) -> ModelOptionRows:
    """`model_options` as columns, decided once per model class, not once per model.

    Models of one class (provider, the roles of the group that may use it) that no fixed
    choice uses or clashes with are interchangeable: each class is decided once, the few
    touched or unavailable models one by one, by the same rule.
    """
    team = team_of(query)
    spec = _instance(query, team, role, ordinal)
    kept = {r: list(refs) for r, refs in query.models.items()}
    if role in kept:
        kept[role] = kept[role][: ordinal - 1]
    valid, failures = _check_explicit(team, _resolve_explicit(team, kept))
    blocked = _blocked(team, spec, valid, failures)
    solver = team.solvers[spec.component]
    usage = team.usage(valid, solver)
    counts = solver.state_dict(usage)
    base = solver.solve(freeze(counts)) if blocked is None else None
    verdicts: dict[Key, str | None] = {}
    clashes = team.clashes(valid, role, ordinal)
    domain = spec.domain

    def completion(key: Key) -> str | None:
        if key not in verdicts:
            verdicts[key] = _completion_reason(solver, counts, base, key, role)
        return verdicts[key]

    def reason_of(model: PoolModel) -> str | None:
        # The role's domain is exactly its available models: ask the pool for the
        # reason only when there is one to show.
        if model.ref not in domain:
            return team.availability(model, role).reason
        if blocked is not None:
            return blocked
        clash = clashes.reason(model)
        if clash is not None:
            return clash
        return completion(solver.key_of(usage, model.ref))

    defaults = list(itertools.islice(team.candidates(role, ordinal), len(spec.defaults)))
    models = [m for m, _ in defaults]
    reasons = [reason_of(m) for m in models]
    provenances: list[str | None] = [p for _, p in defaults]
    table = team.core.rows(role)
    # The models a fixed choice touches (uses, or clashes with by model or provider).
    touched = {table.position(f.model) for f in valid}
    for provider_id, start, stop in table.segments:
        if provider_id in clashes.by_provider:
            touched.update(range(start, stop))
    rows = _pool_rows(team, role, table, counts, blocked, touched, completion, reason_of)
    refs = [m.ref for m in models]
    refs.extend(table.refs)
    models.extend(table.models)
    reasons.extend(rows)
    provenances.extend(itertools.repeat(None, len(table.models)))
    return ModelOptionRows(models, refs, reasons, provenances, len(defaults))


def _completion_reason(
    solver: Solver, counts: Mapping[Key, int], base: Path | None, key: Key, role: str
) -> str | None:
    if solver.choice_feasible(counts, base, role, key):
        return None
    lines = [s.line for s in solver.shortfalls(solver.after(counts, role, key))]
    detail = f" ({'; '.join(lines)})" if lines else ""
    return f"no complete team would remain{detail}"


def unavailable_defaults(query: TeamQuery, role: str) -> str | None:
    """The configured defaults of `role` that are unavailable, said once, or None."""
    try:
        query.scopes.validate(query.pool, query.host, query.entry_mode, [role])
    except OkstraError as exc:
        return exc.message
    return None
