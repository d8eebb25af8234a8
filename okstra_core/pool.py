"""The model pool: every model of the provider registry, with availability per role.

Availability is cached for the pool's life: build a new pool per wizard step.
"""

from __future__ import annotations

import builtins
import itertools
import operator
from collections.abc import Callable, Collection, Hashable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from .binding import bind, choose_runner
from .catalog.models import LEADER, EntryMode, GlobalConfig, HostSpec, ProviderSpec
from .environment import HOST_EFFORT_ENV, HOST_MODEL_ENV, Environment
from .errors import OkstraError, UsageError
from .records import dataclass, field
from .vocabulary import CLI_WRAPPER, CURRENT_SESSION_RUNNER

if TYPE_CHECKING:
    from .readiness import Readiness

_T = TypeVar("_T")


class CatalogLike(Protocol):
    """What `ModelPool.from_catalog` reads from a catalog."""

    @property
    def providers(self) -> Sequence[ProviderSpec]: ...

    @property
    def config(self) -> GlobalConfig: ...


@dataclass(frozen=True)
class PoolModel:
    """One model of the pool (`roles`: the model's roles its provider also supports)."""

    ref: str
    provider_id: str
    model_id: str
    display: str
    execution: str
    aliases: tuple[str, ...]
    version: str
    default_for: tuple[str, ...]
    roles: tuple[str, ...]
    provider: ProviderSpec


@dataclass(frozen=True)
class Availability:
    """Whether a model can run a role instance, and if not, why."""

    available: bool
    reason: str | None = None


_new = object.__new__
_set = object.__setattr__
_REF = operator.attrgetter("ref")
_PROVIDER = operator.attrgetter("provider_id")


def _pool_models(providers: Iterable[ProviderSpec]) -> tuple[PoolModel, ...]:
    out: list[PoolModel] = []
    for provider in providers:
        for spec in provider.models:
            if spec.roles:
                roles = tuple(r for r in spec.roles if r in provider.roles)
            else:
                roles = tuple(provider.roles)
            # One instance dict instead of `__init__`'s per-field setattr: a big pool
            # makes tens of thousands of these.
            model = _new(PoolModel)
            _set(
                model,
                "__dict__",
                {
                    "ref": f"{provider.id}/{spec.id}",
                    "provider_id": provider.id,
                    "model_id": spec.id,
                    "display": spec.display,
                    "execution": spec.execution,
                    "aliases": tuple(spec.aliases),
                    "version": spec.version,
                    "default_for": tuple(spec.default_for),
                    "roles": roles,
                    "provider": provider,
                },
            )
            out.append(model)
    return tuple(out)


@dataclass(frozen=True, eq=False)
class _Registry:
    """The models of one provider registry and their indexes, shared by every pool on it."""

    providers: tuple[ProviderSpec, ...]
    models: tuple[PoolModel, ...]
    by_ref: dict[str, PoolModel]
    by_provider: dict[str, builtins.list[PoolModel]]
    role_lists: dict[str, tuple[PoolModel, ...]]
    role_groups: dict[str, tuple[tuple[str, tuple[PoolModel, ...]], ...]]
    role_defaults: dict[str, tuple[PoolModel, ...]] = field(default_factory=dict)
    # Available refs per (role, id(host), entry mode, provider verdicts); the host is
    # kept in the value so its id is not reused.
    domains: dict[Hashable, tuple[HostSpec, frozenset[str]]] = field(default_factory=dict)
    shared: dict[Hashable, Any] = field(default_factory=dict)

    def role_list(self, role: str) -> tuple[PoolModel, ...]:
        """The models whose provider and model both support `role`, in registry order."""
        if not self.role_lists:
            # One pass for every role (a big pool has ten thousand models).
            found: dict[str, builtins.list[PoolModel]] = {}
            for m in self.models:
                for name in m.roles:
                    listed = found.get(name)
                    if listed is None:
                        found[name] = [m]
                    elif listed[-1] is not m:  # a role named twice: the model once
                        listed.append(m)
            self.role_lists.update({name: tuple(ms) for name, ms in found.items()})
            self.role_lists[""] = ()  # built (even when no model supports anything)
        return self.role_lists.get(role, ())

    def groups(self, role: str) -> tuple[tuple[str, tuple[PoolModel, ...]], ...]:
        cached = self.role_groups.get(role)
        if cached is None:
            cached = tuple(
                (provider_id, tuple(group))
                for provider_id, group in itertools.groupby(self.role_list(role), _PROVIDER)
            )
            self.role_groups[role] = cached
        return cached

    def defaults(self, role: str) -> tuple[PoolModel, ...]:
        """The bundled defaults of `role` that support it, in registry order."""
        if not self.role_defaults:
            # One pass for every role: few models are a default for anything.
            found: dict[str, builtins.list[PoolModel]] = {}
            for m in self.models:
                if m.default_for:
                    for name in m.default_for:
                        listed = found.setdefault(name, [])
                        if name in m.roles and (not listed or listed[-1] is not m):
                            listed.append(m)
            self.role_defaults.update({name: tuple(ms) for name, ms in found.items()})
            self.role_defaults[""] = ()  # built (even when nothing is a default)
        return self.role_defaults.get(role, ())


# Keyed by the ids of the provider specs (held by the entry, so never reused).
_REGISTRIES: dict[tuple[int, ...], _Registry] = {}
_REGISTRY_LIMIT = 8
_SHARED_LIMIT = 16


def _registry(providers: tuple[ProviderSpec, ...]) -> _Registry:
    key = tuple(id(p) for p in providers)
    registry = _REGISTRIES.get(key)
    if registry is not None and all(
        a is b for a, b in zip(registry.providers, providers, strict=True)
    ):
        return registry
    models = _pool_models(providers)
    by_provider: dict[str, builtins.list[PoolModel]] = {}
    for m in models:
        by_provider.setdefault(m.provider_id, []).append(m)
    registry = _Registry(providers, models, {m.ref: m for m in models}, by_provider, {}, {})
    if len(_REGISTRIES) >= _REGISTRY_LIMIT:
        _REGISTRIES.pop(next(iter(_REGISTRIES)))
    _REGISTRIES[key] = registry
    return registry


class ModelPool:
    """The models of a provider registry, with per-instance cached availability."""

    def __init__(
        self,
        providers: Sequence[ProviderSpec],
        environment: Environment,
        config: GlobalConfig | None = None,
    ) -> None:
        """Build the pool (`config`: the global config, defaults when omitted)."""
        self._providers = tuple(providers)
        self._environment = environment
        self._config = config or GlobalConfig()
        registry = self._registry = _registry(self._providers)
        self._models = registry.models
        self._by_ref = registry.by_ref
        self._by_provider = registry.by_provider
        self._which: dict[str, str | None] = {}
        self._readiness: dict[str, Readiness] = {}
        self._availability: dict[tuple[str, str, str, str], Availability] = {}
        self._provider_verdicts: dict[tuple[str, str, str, str], Availability] = {}
        self._memo: dict[Hashable, Any] = {}

    @classmethod
    def from_catalog(cls, catalog: CatalogLike, environment: Environment) -> ModelPool:
        """Build the pool of a loaded catalog (its providers and global config)."""
        return cls(catalog.providers, environment, catalog.config)

    @property
    def environment(self) -> Environment:
        return self._environment

    @property
    def providers(self) -> tuple[ProviderSpec, ...]:
        return self._providers

    def models(self) -> tuple[PoolModel, ...]:
        """Every model, in registry order."""
        return self._models

    def list(self, role: str) -> builtins.list[PoolModel]:
        """Models whose provider and model both support `role`, in registry order."""
        return list(self._registry.role_list(role))

    def roles(self) -> tuple[str, ...]:
        """Every role some provider supports, leader first, then in first-seen order."""
        seen: dict[str, None] = {LEADER: None}
        for provider in self._providers:
            for role in provider.roles:
                seen.setdefault(role, None)
        return tuple(seen)

    def get(self, ref: str) -> PoolModel | None:
        """The model with exactly this ref, or None."""
        return self._by_ref.get(ref)

    def resolve(self, ref: str) -> PoolModel:
        """The model with this ref (``provider/model_id``); `UsageError` naming the known ones."""
        model = self._by_ref.get(ref)
        if model is not None:
            return model
        provider_id, sep, _ = ref.partition("/")
        if not sep:
            raise UsageError(f"model ref {ref!r} must be 'provider/model_id'")
        raise UsageError(self._unknown_message(ref, provider_id))

    def resolve_alias(self, provider_id: str, value: str) -> PoolModel:
        """The model of `provider_id` whose id or alias is `value`, ignoring case."""
        models = self._by_provider.get(provider_id) or self._by_provider.get(provider_id.casefold())
        if models is None:
            known = ", ".join(p.id for p in self._providers) or "none"
            raise UsageError(f"unknown provider {provider_id!r} (known: {known})")
        provider_id = models[0].provider_id
        wanted = value.strip().casefold()
        for m in models:
            if m.model_id.casefold() == wanted:
                return m
        for m in models:
            if any(a.casefold() == wanted for a in m.aliases):
                return m
        raise UsageError(self._unknown_message(f"{provider_id}/{value}", provider_id))

    def lookup(self, value: str) -> PoolModel:
        """A model by ref, or by ``provider/alias`` (case-insensitive); UsageError if none."""
        model = self._by_ref.get(value)
        if model is not None:
            return model
        provider_id, sep, rest = value.partition("/")
        if not sep or not provider_id or not rest:
            raise UsageError(f"model {value!r} must be 'provider/model_id' or 'provider/alias'")
        return self.resolve_alias(provider_id, rest)

    def default_candidates(self, role: str) -> builtins.list[PoolModel]:
        """Bundled defaults for `role` (``default_for``) that support it, registry order."""
        return list(self._registry.defaults(role))

    def shared_memo(self, key: Hashable, build: Callable[[], _T]) -> _T:
        """`build()`'s result, shared by every pool on the same provider specs.

        Only for values that follow from the specs and `key` (at most `_SHARED_LIMIT` kept).
        """
        shared = self._registry.shared
        try:
            value: _T = shared[key]
        except KeyError:
            value = build()
            if len(shared) >= _SHARED_LIMIT:
                shared.pop(next(iter(shared)), None)
            shared[key] = value
        return value

    def memo(self, key: Hashable, build: Callable[[], _T]) -> _T:
        """`build()`'s result for the life of this pool (may depend on availability)."""
        try:
            value: _T = self._memo[key]
        except KeyError:
            value = self._memo[key] = build()
        return value

    def which(self, cli: str) -> str | None:
        """PATH look-up of a CLI, cached for the life of the pool."""
        if cli not in self._which:
            self._which[cli] = self._environment.which(cli)
        return self._which[cli]

    def availability(
        self, ref: str, role: str, host: HostSpec, entry_mode: EntryMode
    ) -> Availability:
        """Whether `ref` can run `role` on `host` in `entry_mode`, and if not, why.

        Checked: role support, a disabled provider, the host binding, the CLI's readiness.
        """
        # Keyed by host id: hashing the frozen host is slow.
        key = (ref, role, host.id, entry_mode)
        cached = self._availability.get(key)
        if cached is None:
            cached = self._compute(self.resolve(ref), role, host, entry_mode)
            self._availability[key] = cached
        return cached

    def demo_refs(self) -> frozenset[str]:
        """The refs of the demo providers' models (`demo = true`)."""
        return self.shared_memo(
            "demo-refs", lambda: frozenset(m.ref for m in self._models if m.provider.demo)
        )

    def named_domain(self, domain: frozenset[str], named: Collection[str]) -> frozenset[str]:
        """`domain` without the demo models not in `named` (identical result per input)."""
        hidden = (domain & self.demo_refs()).difference(named)
        if not hidden:
            return domain
        return self.shared_memo(("named-domain", domain, hidden), lambda: domain - hidden)

    def available_refs(self, role: str, host: HostSpec, entry_mode: EntryMode) -> frozenset[str]:
        """The refs of `list(role)` whose `availability` is available (cached per pool)."""
        key = ("available-refs", role, host.id, entry_mode)
        cached: frozenset[str] | None = self._memo.get(key)
        if cached is not None:
            return cached
        groups = self._registry.groups(role)
        verdicts = [self._verdict(ms[0], role, host, entry_mode).available for _, ms in groups]
        # Beyond the verdicts only the host binding decides: shared by every pool.
        shared_key = (role, id(host), entry_mode, tuple(verdicts))
        domains = self._registry.domains
        hit = domains.get(shared_key)
        if hit is not None and hit[0] is host:
            result = hit[1]
        else:
            result = self._available_refs(groups, verdicts, role, host, entry_mode)
            if len(domains) >= _SHARED_LIMIT * 4:
                domains.pop(next(iter(domains)), None)
            domains[shared_key] = (host, result)
        self._memo[key] = result
        return result

    def _available_refs(
        self,
        groups: Sequence[tuple[str, tuple[PoolModel, ...]]],
        verdicts: Sequence[bool],
        role: str,
        host: HostSpec,
        entry_mode: EntryMode,
    ) -> frozenset[str]:
        refs: builtins.list[str] = []
        for (provider_id, models), available in zip(groups, verdicts, strict=True):
            if not available:
                continue
            if choose_runner(role, provider_id, host, entry_mode) == CLI_WRAPPER:
                refs.extend(map(_REF, models))
            else:
                # A host-bound runner: each model's binding decides (as `availability`).
                refs.extend(
                    m.ref
                    for m in models
                    if self.availability(m.ref, role, host, entry_mode).available
                )
        return frozenset(refs)

    def _compute(
        self, model: PoolModel, role: str, host: HostSpec, entry_mode: EntryMode
    ) -> Availability:
        if role in model.provider.roles and role not in model.roles:
            return Availability(False, f"model {model.ref} does not support role {role!r}")
        verdict = self._verdict(model, role, host, entry_mode)
        if verdict.available and choose_runner(role, model.provider_id, host, entry_mode) != (
            CLI_WRAPPER
        ):
            # A host-bound runner: the host must accept this model's execution value.
            try:
                bind(model, role, host, entry_mode)
            except OkstraError as exc:
                return Availability(
                    False, f"host {host.id!r} cannot bind {model.ref}: {exc.message}"
                )
        return verdict

    def _verdict(
        self, model: PoolModel, role: str, host: HostSpec, entry_mode: EntryMode
    ) -> Availability:
        """The provider's verdict (everything but the model's own roles and binding)."""
        key = (model.provider_id, role, host.id, entry_mode)
        verdict = self._provider_verdicts.get(key)
        if verdict is None:
            verdict = self._provider_verdict(model, role, host, entry_mode)
            self._provider_verdicts[key] = verdict
        return verdict

    def _provider_verdict(
        self, model: PoolModel, role: str, host: HostSpec, entry_mode: EntryMode
    ) -> Availability:
        provider = model.provider
        if role not in provider.roles:
            return Availability(False, f"provider {provider.id!r} does not support role {role!r}")
        if provider.id in self._config.disabled_providers:
            where = f" ({self._config.source})" if self._config.source else ""
            return Availability(False, f"provider {provider.id!r} is disabled in config{where}")
        runner = choose_runner(role, provider.id, host, entry_mode)
        if runner == CURRENT_SESSION_RUNNER:
            return Availability(
                False,
                f"in current-session mode the leader is the {host.id!r} host session; "
                "no model is chosen for it",
            )
        if runner == CLI_WRAPPER:
            verdict = self.readiness(provider)
            if verdict.path is None:
                return Availability(False, f"cli {provider.cli!r} not found on PATH")
            wrong = verdict.why_not(lead=role == LEADER)
            if wrong is not None:
                problem, fix = wrong
                return Availability(False, f"{problem} — {fix}" if fix else problem)
        return Availability(True, None)

    def readiness(self, provider: ProviderSpec) -> Readiness:
        """The verdict on `provider`'s CLI (`readiness.cli_readiness`), kept for the pool's life."""
        found = self._readiness.get(provider.id)
        if found is None:
            from .readiness import cli_readiness

            found = self._readiness[provider.id] = cli_readiness(provider, self._environment)
        return found

    def login_notes(self, provider_ids: Iterable[str]) -> tuple[str, ...]:
        """The notes (each once) of the CLIs of `provider_ids` whose login okstra cannot tell."""
        notes: builtins.list[str] = []
        for provider_id in dict.fromkeys(provider_ids):
            provider = next((p for p in self._providers if p.id == provider_id), None)
            note = self.readiness(provider).login_note if provider is not None else None
            if note is not None:
                notes.append(note)
        return tuple(notes)

    def _unknown_message(self, shown: str, provider_id: str) -> str:
        models = self._by_provider.get(provider_id)
        if models is None:
            known = ", ".join(p.id for p in self._providers) or "none"
            return f"unknown model {shown!r}: no provider {provider_id!r} (known: {known})"
        names = ", ".join(m.ref for m in models)
        return f"unknown model {shown!r} (provider {provider_id!r} has: {names})"


# ---------------------------------------------------------------------------- host session


def reported_host_model(environment: Environment, pool: ModelPool | None) -> str | None:
    """The host session's model ref from `OKSTRA_HOST_MODEL`, canonical when known."""
    raw = (environment.get(HOST_MODEL_ENV) or "").strip()
    return canonical_model(raw, pool) if raw else None


def reported_host_effort(environment: Environment) -> str | None:
    return (environment.get(HOST_EFFORT_ENV) or "").strip() or None


def canonical_model(value: str, pool: ModelPool | None) -> str:
    if pool is None:
        return value
    try:
        return pool.lookup(value).ref
    except OkstraError:
        return value
