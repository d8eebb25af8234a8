"""The earlier okstra's team flags and variables, read as today's role flags.

`parse_legacy_flags` reads what the older inputs of a prepare command line ask of the
team (`--workers`, `--<provider>-model`, `--worker-model`, the lead, the report writer,
the executor, the critic, the `OKSTRA_DEFAULT_*` variables) and returns the
`--role-count`/`--role-model` values they stand for, crediting each older input (for the
notes). It changes nothing. An older flag deciding a role a new flag also decides is
refused naming both; a variable loses to a new flag silently (it is a default).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ..catalog.models import LEADER, RoleKind
from ..errors import UsageError
from ..records import dataclass, field
from ..vocabulary import CURRENT_SESSION, EARLIER_DEFAULT_PROVIDER, SPAWN_PROCESS
from .lookup import (
    CRITIC_OFF,
    CROSS_VERIFICATION_ROLES,
    EXECUTOR_VARIABLE,
    LEAD_MODEL_VARIABLE,
    MODEL_PROVIDERS,
    REPORT_WRITER_MODEL_VARIABLE,
    default_candidates,
    legacy_model,
    provider_model_variable,
    roster_providers,
    variable_value,
)

if TYPE_CHECKING:
    import argparse

    from ..catalog.models import Profile, RoleRequirement
    from ..defaults import DefaultScopes
    from ..pool import ModelPool


@dataclass
class FlagDecisions:
    """What the older inputs decided: new flag values per role, and the notes."""

    counts: dict[str, int] = field(default_factory=dict)
    models: dict[str, list[str]] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)  # role -> older flag/variable
    contrib: dict[str, list[str]] = field(default_factory=dict)  # flag/variable -> new form
    notes: list[str] = field(default_factory=list)

    def credit(self, entry: str, *givers: str) -> None:
        """Record that `entry` (a new-form flag) came from these older flags/variables."""
        for giver in dict.fromkeys(givers):
            if giver:
                self.contrib.setdefault(giver, []).append(entry)

    def forget(self, role: str) -> None:
        """Drop what was decided for `role` (a new flag decides it instead)."""
        self.models.pop(role, None)
        self.counts.pop(role, None)
        self.sources.pop(role)
        for entries in self.contrib.values():
            entries[:] = [e for e in entries if not e.split(" ", 1)[1].startswith(f"{role}=")]


def flag_value(ns: argparse.Namespace, dest: str) -> str:
    """A string flag's value on `ns`, stripped ("" when absent)."""
    raw = getattr(ns, dest, None)
    return raw.strip() if isinstance(raw, str) else ""


def _roles_named(values: Sequence[str]) -> dict[str, str]:
    """role → the first `--role-…` value naming it (for conflict messages)."""
    out: dict[str, str] = {}
    for value in values:
        role = value.partition("=")[0].strip()
        if role:
            out.setdefault(role, value)
    return out


@dataclass(frozen=True)
class _Inputs:
    """One prepare command line's older inputs, and what reading them needs."""

    ns: argparse.Namespace
    env: Mapping[str, str]
    profile: Profile
    pool: ModelPool
    scopes: DefaultScopes
    models: Mapping[str, tuple[str, str]]  # provider -> (model value, where from)
    new_counts: Mapping[str, str]  # role -> the --role-count value naming it
    new_models: Mapping[str, str]  # role -> the --role-model value naming it
    entry_mode: str
    # The provider of a lead or report writer whose provider is not named: the host's
    # own provider, or the earlier default on a host without one.
    home_provider: str = EARLIER_DEFAULT_PROVIDER

    def given(self, dest: str) -> bool:
        return getattr(self.ns, dest, None) is not None

    def resolve(self, provider: str, role: str, value: str, where: str) -> str:
        """The model ref of an earlier (provider, value) for `role`; refused naming `where`."""
        model = legacy_model(self.pool, self.scopes, provider, role, value)
        if model is None:
            what = (
                f"model {value!r} of provider {provider!r}" if value else f"provider {provider!r}"
            )
            raise UsageError(
                f"{what} has no model for the {role} role here: expected a provider id and a "
                f"model alias, id or ref that serves it (see `okstra models --role {role}`)",
                field=where,
            )
        return model.ref

    def resolve_unnamed(
        self, role: str, value: str, where: str, provider_flag: str, home: str
    ) -> str:
        """The model ref of a value given without its provider: `home`'s, else the one
        provider's that has it; refused when several have it (naming them) or none does."""
        if not value:
            return self.resolve(home, role, value, where)
        model = legacy_model(self.pool, self.scopes, home, role, value)
        if model is not None:
            return model.ref
        providers = dict.fromkeys(m.provider_id for m in self.pool.models())
        models = (legacy_model(self.pool, self.scopes, p, role, value) for p in providers)
        found = sorted({m.ref for m in models if m is not None})
        if len(found) > 1:
            raise UsageError(
                f"model {value!r} is ambiguous for the {role} role: {', '.join(found)} "
                f"have it; name the provider with {provider_flag} or give the model ref",
                field=where,
            )
        if found:
            return found[0]
        raise UsageError(
            f"model {value!r} is no model for the {role} role of the provider "
            f"{home!r} or of any other: expected a model alias, id or ref that "
            f"serves it (see `okstra models --role {role}`)",
            field=where,
        )

    def require_role(self, role: str, flag: str) -> RoleRequirement:
        requirement = self.profile.role(role)
        if requirement is None or requirement.dynamic:
            raise UsageError(
                f"the {self.profile.task_type} profile has no {role} role to give it to", field=flag
            )
        return requirement

    def single(
        self, decided: FlagDecisions, role: str, provider: str, value: str, where: str, *givers: str
    ) -> None:
        """One model for `role`, from `where` (credited to it and to `givers`)."""
        self.record(decided, role, self.resolve(provider, role, value, where), where, *givers)

    def record(self, decided: FlagDecisions, role: str, ref: str, where: str, *givers: str) -> None:
        """Record `ref` as the one model of `role`, from `where`."""
        decided.models[role] = [ref]
        decided.sources[role] = where
        decided.credit(f"--role-model {role}={ref}", where, *givers)


def _worker_models(ns: argparse.Namespace, env: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """provider → (model value, where it came from): flags first, then the variables."""
    out: dict[str, tuple[str, str]] = {}
    for item in flag_value(ns, "legacy_worker_model").split(","):
        if not item.strip():
            continue
        provider, sep, model = item.partition("=")
        if not sep or not provider.strip() or not model.strip():
            raise UsageError(
                f"expected 'provider=model' items, got {item.strip()!r}", field="--worker-model"
            )
        key = provider.strip().lower()
        if key in out:
            raise UsageError(f"provider {key!r} is given twice", field="--worker-model")
        out[key] = (model.strip(), "--worker-model")
    for provider in MODEL_PROVIDERS:
        value = flag_value(ns, f"legacy_{provider}_model")
        if value:
            if provider in out:
                raise UsageError(
                    f"--{provider}-model and --worker-model {provider}=… both set the "
                    f"{provider} model: give one",
                    field=f"--{provider}-model",
                )
            out[provider] = (value, f"--{provider}-model")
    for provider in MODEL_PROVIDERS:
        variable = provider_model_variable(provider)
        value = variable_value(env, variable)
        if value and provider not in out:
            out[provider] = (value, variable)
    return out


def _roster(
    inputs: _Inputs, cross: RoleRequirement, roster: list[str], flags: list[str]
) -> tuple[int, list[str], str] | None:
    """(count, providers, the input they came from) of the cross role, or None; without
    `--workers`, its default candidates at its recommended count (the earlier roster)."""
    if roster:
        count = max(cross.min, min(cross.max, len(roster)))
        return count, roster[:count], "--workers"
    count = cross.recommended_count
    candidates = default_candidates(inputs.pool, inputs.scopes, cross.role)[:count]
    providers = [model.provider_id for model, _ in candidates]
    if flags:
        return count, providers, flags[0]
    variables = sorted({inputs.models[p][1] for p in providers if p in inputs.models})
    if not variables:
        return None  # variables for providers the team does not use: nothing to do
    return count, providers, variables[0]


def _workers(decided: FlagDecisions, inputs: _Inputs) -> None:
    """The earlier roster (`--workers`, or per-provider models alone) → the cross role
    (not in implementation: there they belonged to the executor, not the verifiers)."""
    profile = inputs.profile
    cross = next((r for r in profile.static_roles if r.role in CROSS_VERIFICATION_ROLES), None)
    raw = getattr(inputs.ns, "legacy_workers", None)
    flags = sorted({where for _, where in inputs.models.values() if where.startswith("--")})
    if profile.task_type == "implementation":
        if raw is not None:
            decided.notes.append(
                "okstra prepare: --workers is ignored for implementation (the earlier okstra "
                "used it only to check the executor): give --role-count verifier=N and "
                "--role-model verifier=<model ref>"
            )
        return
    roster = roster_providers((raw or "").split(","))
    if cross is None:
        if roster or flags:
            raise UsageError(
                f"the {profile.task_type} profile has no cross-verification role for workers",
                field="--workers" if roster else flags[0],
            )
        return
    found = _roster(inputs, cross, roster, flags)
    if found is None:
        return
    count, providers, source = found
    if cross.kind == RoleKind.ADJUSTABLE:
        decided.counts[cross.role] = count
        decided.credit(f"--role-count {cross.role}={count}", source)
    refs: list[str] = []
    for provider in providers:
        value, where = inputs.models.get(provider, ("", source))
        ref = inputs.resolve(provider, cross.role, value, where)
        refs.append(ref)
        decided.credit(f"--role-model {cross.role}={ref}", source, where)
    decided.models[cross.role] = refs
    decided.sources[cross.role] = source


@dataclass(frozen=True)
class _OneModelRole:
    """A role the earlier okstra chose with a provider flag and a model flag."""

    role: str
    provider: tuple[str, str]  # (flag, dest)
    model: tuple[str, str]  # (flag, dest)
    variable: str  # the variable with its model for the earlier default provider


_ONE_MODEL_ROLES = (
    _OneModelRole(
        LEADER,
        ("--lead-provider", "legacy_lead_provider"),
        ("--lead-model", "legacy_lead_model"),
        LEAD_MODEL_VARIABLE,
    ),
    _OneModelRole(
        "report-writer",
        ("--report-writer-provider", "legacy_rw_provider"),
        ("--report-writer-model", "legacy_rw_model"),
        REPORT_WRITER_MODEL_VARIABLE,
    ),
)


def _variable_applies(inputs: _Inputs, role: str) -> bool:
    """Whether a variable's model reaches `role`: it is in the team, and no new flag
    gives it (the lead takes a model only when okstra starts it)."""
    if role in inputs.new_models:
        return False
    if role == LEADER:
        return inputs.entry_mode == SPAWN_PROCESS
    return inputs.profile.role(role) is not None


def _ignored(decided: FlagDecisions, spec: _OneModelRole, provider: str) -> None:
    """The note of a variable that does not apply: it is for a claude assignment only."""
    decided.notes.append(
        f"okstra prepare: {spec.variable} is ignored: as in the earlier okstra it applies "
        f"to a claude {spec.role} only, and the {spec.role} here runs on {provider!r}"
    )


def _one_model_role(decided: FlagDecisions, inputs: _Inputs, spec: _OneModelRole) -> None:
    """The lead or the report writer: its older flags, or else its variable (which
    applies to a claude assignment only, else is ignored with a note). An unnamed
    provider is the host's own for the lead, claude for the report writer; a model
    without its provider is looked up there, then across providers."""
    ns = inputs.ns
    flag = next((f for f, dest in (spec.provider, spec.model) if inputs.given(dest)), None)
    from_variable = variable_value(inputs.env, spec.variable)
    home = inputs.home_provider if spec.role == LEADER else EARLIER_DEFAULT_PROVIDER
    if flag is None:
        if from_variable and _variable_applies(inputs, spec.role):
            if home != EARLIER_DEFAULT_PROVIDER:
                _ignored(decided, spec, home)
                return
            inputs.single(decided, spec.role, home, from_variable, spec.variable)
        return
    if spec.role == LEADER and inputs.entry_mode == CURRENT_SESSION:
        raise UsageError(
            f"{flag} contradicts --entry-mode current-session: the host session is the "
            "leader there",
            field=flag,
        )
    if spec.role != LEADER:
        inputs.require_role(spec.role, flag)
    named = flag_value(ns, spec.provider[1]).lower()
    provider = named or home
    model = flag_value(ns, spec.model[1])
    from_env = not model and provider == EARLIER_DEFAULT_PROVIDER and bool(from_variable)
    if from_variable and not model and not from_env:
        _ignored(decided, spec, provider)
    value = model or (from_variable if from_env else "")
    givers = [f for f, dest in (spec.provider, spec.model) if inputs.given(dest)]
    if from_env:
        givers.append(spec.variable)
    if named or from_env:
        inputs.single(decided, spec.role, provider, value, flag, *givers)
    else:
        ref = inputs.resolve_unnamed(spec.role, value, flag, spec.provider[0], home)
        inputs.record(decided, spec.role, ref, flag, *givers)


def _executor(decided: FlagDecisions, inputs: _Inputs) -> None:
    """The implementer: `--executor <provider>`, or else `OKSTRA_DEFAULT_EXECUTOR`."""
    executor = flag_value(inputs.ns, "legacy_executor").lower()
    env_executor = variable_value(inputs.env, EXECUTOR_VARIABLE).lower()
    if inputs.given("legacy_executor"):
        inputs.require_role("implementer", "--executor")
        provider = executor or env_executor or EARLIER_DEFAULT_PROVIDER
        value, where = inputs.models.get(provider, ("", "--executor"))
        by_env = EXECUTOR_VARIABLE if not executor and env_executor else ""
        inputs.single(decided, "implementer", provider, value, "--executor", where, by_env)
    elif env_executor and _variable_applies(inputs, "implementer"):
        value, where = inputs.models.get(env_executor, ("", ""))
        inputs.single(decided, "implementer", env_executor, value, EXECUTOR_VARIABLE, where)


def _critic(decided: FlagDecisions, inputs: _Inputs) -> None:
    """The critic (optional): off/none/no → not added; a provider → one critic."""
    if not inputs.given("legacy_critic"):
        return
    critic = flag_value(inputs.ns, "legacy_critic").lower()
    if critic in CRITIC_OFF:
        if inputs.profile.role("critic") is not None:
            decided.counts["critic"] = 0
            decided.sources["critic"] = "--critic"
            decided.credit("--role-count critic=0", "--critic")
    elif critic:
        inputs.require_role("critic", "--critic")
        value, where = inputs.models.get(critic, ("", "--critic"))
        decided.counts["critic"] = 1
        decided.credit("--role-count critic=1", "--critic")
        inputs.single(decided, "critic", critic, value, "--critic", where)


def _refuse_conflicts(decided: FlagDecisions, inputs: _Inputs) -> None:
    """An older flag and a new flag deciding the same role: refused, naming both."""
    for role, source in decided.sources.items():
        if not source.startswith("--"):
            continue
        clash = inputs.new_counts.get(role) if role in decided.counts else None
        flag = "--role-count"
        if clash is None and (role in decided.models or role in decided.counts):
            clash, flag = inputs.new_models.get(role), "--role-model"
        if clash is not None:
            raise UsageError(
                f"{source} and {flag} {clash} both decide the {role} role: give one "
                f"(prefer {flag})",
                field=source,
            )


def parse_legacy_flags(
    ns: argparse.Namespace,
    env: Mapping[str, str],
    profile: Profile,
    pool: ModelPool,
    scopes: DefaultScopes,
    host_provider: str | None = None,
) -> FlagDecisions:
    """What the older flags and variables on `ns` / in `env` ask for (nothing changes);
    `host_provider` (None: none) leads when nobody names a provider. A `UsageError` for a
    conflict with a new flag (both named) or an older value naming nothing known."""
    inputs = _Inputs(
        ns=ns,
        env=env,
        profile=profile,
        pool=pool,
        scopes=scopes,
        models=_worker_models(ns, env),
        new_counts=_roles_named(getattr(ns, "role_counts", None) or ()),
        new_models=_roles_named(getattr(ns, "role_models", None) or ()),
        entry_mode=flag_value(ns, "entry_mode") or SPAWN_PROCESS,
        home_provider=host_provider or EARLIER_DEFAULT_PROVIDER,
    )
    decided = FlagDecisions()
    _workers(decided, inputs)
    for spec in _ONE_MODEL_ROLES:
        _one_model_role(decided, inputs, spec)
    _executor(decided, inputs)
    _critic(decided, inputs)
    _refuse_conflicts(decided, inputs)
    # Variables lose to new flags silently (they are defaults).
    given = {*inputs.new_models, *inputs.new_counts}
    for role, source in list(decided.sources.items()):
        if source.startswith("OKSTRA_") and role in given:
            decided.forget(role)
    return decided
