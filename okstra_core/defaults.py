"""Model defaults scopes: project > global > bundled, each model once (first scope wins)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple, Protocol

from .catalog.models import LEADER, EntryMode, HostSpec, ModelDefaults, Profile, ProviderSpec
from .errors import DataFileError, OkstraError, UsageError
from .pool import CatalogLike, ModelPool, PoolModel
from .records import dataclass, field
from .vocabulary import CURRENT_SESSION, EARLIER_DEFAULT_PROVIDER

# Roles on the host's own provider when nobody names one (the report writer stays claude).
HOST_PROVIDER_ROLES = frozenset({LEADER})
REPORT_WRITER = "report-writer"


class _CatalogLike(CatalogLike, Protocol):
    """What `load_scopes` reads from a loaded catalog."""

    @property
    def profiles(self) -> Mapping[str, Profile]: ...


def known_roles(providers: Iterable[ProviderSpec], profiles: Iterable[Profile]) -> set[str]:
    """Every role a `modelDefaults` entry may name: leader, provider and profile roles."""
    roles = {LEADER}
    for provider in providers:
        roles.update(provider.roles)
    for profile in profiles:
        roles.update(r.role for r in profile.roles)
    return roles


def _model_keys(providers: Iterable[ProviderSpec]) -> dict[str, str]:
    """Every accepted spelling of a model, case-folded (ref, provider/alias) -> its ref."""
    keys: dict[str, str] = {}
    for provider in providers:
        for spec in provider.models:
            ref = f"{provider.id}/{spec.id}"
            keys[ref.casefold()] = ref
            keys.update((f"{provider.id}/{alias}".casefold(), ref) for alias in spec.aliases)
    return keys


def _bare(ref: str, keys: Mapping[str, str]) -> str | None:
    """The claude model a bare id or alias names (the earlier okstra's were claude's)."""
    return keys.get(f"{EARLIER_DEFAULT_PROVIDER}/{ref}".casefold())


def _screen_refs(
    refs: Sequence[str], where: str, path: str, keys: Mapping[str, str], notes: list[str]
) -> list[str]:
    """The refs of one role that mean a known model, each once; notes for the rest."""
    good: list[str] = []
    for index, ref in enumerate(refs):
        item = f"{where}[{index}]"
        if "/" in ref:
            found = keys.get(ref.casefold())
        else:
            found = _bare(ref, keys)
            if found is not None:
                notes.append(f"{path}: {item}: {ref!r} read as {found!r}")
        if found is None:
            notes.append(
                f"{path}: {item}: unknown model ref {ref!r}, ignored "
                "(expected 'provider/model_id' of a known model, or a claude model's id or "
                "alias)"
            )
            continue
        if found in good:
            notes.append(f"{path}: {item}: {ref!r} is listed already, ignored")
            continue
        good.append(found if "/" not in ref else ref)
    return good


def screen_model_defaults(
    defaults: ModelDefaults, providers: Iterable[ProviderSpec], roles: Collection[str]
) -> tuple[ModelDefaults, list[str]]:
    """Keep what a `modelDefaults` block can mean here; note the rest (`DataFileError`: empty)."""
    notes: list[str] = list(defaults.notes)
    if not defaults.by_role:
        return defaults, notes  # nothing configured: skip indexing every model of the registry
    keys = _model_keys(providers)
    path = defaults.source or "modelDefaults"
    kept: dict[str, tuple[str, ...]] = {}
    for role, refs in defaults.by_role.items():
        where = f"modelDefaults.{role}"
        if not refs:
            raise DataFileError(
                "expected a non-empty array of model refs",
                path=defaults.source or None,
                field=where,
            )
        if role not in roles:
            notes.append(
                f"{path}: {where}: unknown role {role!r}, ignored "
                f"(known: {', '.join(sorted(roles))})"
            )
            continue
        good = _screen_refs(refs, where, path, keys, notes)
        if good:
            kept[role] = tuple(good)
    if not notes:
        return defaults, []
    return ModelDefaults(by_role=kept, source=defaults.source), notes


def bundled_candidates(
    pool: ModelPool, role: str, host_provider: str | None = None
) -> list[PoolModel]:
    """okstra's own defaults of `role`; the lead's start with the host's own provider."""
    bundled = pool.default_candidates(role)
    if host_provider is None or role not in HOST_PROVIDER_ROLES:
        return bundled
    own = [m for m in bundled if m.provider_id == host_provider]
    if not own:
        own = [m for m in pool.list(role) if m.provider_id == host_provider][:1]
    return own + [m for m in bundled if m not in own]


@dataclass(frozen=True)
class DefaultScopes:
    """The configured model defaults, highest scope first (`earlier`: the earlier okstra's)."""

    project: ModelDefaults = field(default_factory=ModelDefaults)
    global_: ModelDefaults = field(default_factory=ModelDefaults)
    earlier: ModelDefaults = field(default_factory=ModelDefaults)
    notes: tuple[str, ...] = ()

    def _scoped(self) -> tuple[tuple[ModelDefaults, str], ...]:
        return (
            (self.project, "default:project"),
            (self.global_, "default:global"),
            (self.earlier, "default:global"),
        )

    def candidates(
        self, role: str, pool: ModelPool, host_provider: str | None = None
    ) -> list[tuple[PoolModel, str]]:
        """The default models of `role` with their provenance, each once, highest first."""
        found = [
            (pool.lookup(ref), provenance)
            for defaults, provenance in self._scoped()
            for ref in defaults.by_role.get(role, ())
        ]
        found += [(m, "default:bundled") for m in bundled_candidates(pool, role, host_provider)]
        out: dict[str, tuple[PoolModel, str]] = {}
        for model, provenance in found:
            out.setdefault(model.ref, (model, provenance))
        return list(out.values())

    def validate(
        self, pool: ModelPool, host: HostSpec, entry_mode: EntryMode, roles: Iterable[str]
    ) -> None:
        """Refuse configured defaults unavailable for a role of this team (`OkstraError`)."""
        problems: list[str] = []
        first_path: str | None = None
        for role in roles:
            if role == LEADER and entry_mode == CURRENT_SESSION:
                continue
            for defaults, _ in self._scoped():
                for ref in defaults.by_role.get(role, ()):
                    try:
                        model = pool.lookup(ref)
                    except UsageError as exc:
                        reason = exc.message
                        shown = ref
                    else:
                        verdict = pool.availability(model.ref, role, host, entry_mode)
                        if verdict.available:
                            continue
                        reason = verdict.reason or "unavailable"
                        shown = model.ref
                    where = f" ({defaults.source})" if defaults.source else ""
                    problems.append(
                        f"configured default {shown} for role {role!r}{where} is unavailable: "
                        f"{reason}"
                    )
                    first_path = first_path or defaults.source or None
        if problems:
            raise OkstraError("; ".join(problems), path=first_path if len(problems) == 1 else None)


def load_scopes(
    project_root: Path | None, catalog: _CatalogLike, env: Mapping[str, str] | None = None
) -> DefaultScopes:
    """Read the project, global and earlier global model defaults (`DataFileError`)."""
    from .catalog import loaders  # deferred: loaders import the data layer
    from .config import earlier_config_notice, load_earlier_defaults

    global_defaults = catalog.config.model_defaults
    project_defaults = ModelDefaults()
    if project_root is not None:
        project_defaults = loaders.load_project_config(project_root).model_defaults
    earlier_defaults = load_earlier_defaults(env)
    roles = known_roles(catalog.providers, catalog.profiles.values())
    notes: list[str] = []
    screened: list[ModelDefaults] = []
    for defaults in (project_defaults, global_defaults, earlier_defaults):
        kept, found = screen_model_defaults(defaults, catalog.providers, roles)
        screened.append(kept)
        notes.extend(found)
    if earlier_defaults.by_role:
        notes.extend(earlier_config_notice(env))
    return DefaultScopes(
        project=screened[0], global_=screened[1], earlier=screened[2], notes=tuple(notes)
    )


class Pick(NamedTuple):
    """One role instance's model as the defaults chose it (fields of an assignment)."""

    role: str
    ordinal: int
    model_ref: str
    provenance: str


class _PickLike(Protocol):
    @property
    def role(self) -> str: ...
    @property
    def ordinal(self) -> int: ...
    @property
    def model_ref(self) -> str: ...
    @property
    def provenance(self) -> str: ...


def fallback_note(
    pick: _PickLike, pool: ModelPool, host: HostSpec, entry_mode: EntryMode
) -> str | None:
    """The note on a report writer okstra's own defaults could not give to claude.

    None for every other pick, and when some claude model can run it.
    """
    if (
        pick.role != REPORT_WRITER
        or pick.provenance != "default:bundled"
        or pick.model_ref.partition("/")[0] == EARLIER_DEFAULT_PROVIDER
    ):
        return None
    earlier = [m for m in pool.list(REPORT_WRITER) if m.provider_id == EARLIER_DEFAULT_PROVIDER]
    reasons = [pool.availability(m.ref, REPORT_WRITER, host, entry_mode).reason for m in earlier]
    if not reasons or None in reasons:
        return None
    return (
        f"{pick.role}#{pick.ordinal}: {EARLIER_DEFAULT_PROVIDER} cannot run the report "
        f"writer here ({reasons[0]}); the default rules picked {pick.model_ref}"
    )


def fallback_notes(
    picks: Iterable[_PickLike], pool: ModelPool, host: HostSpec, entry_mode: EntryMode
) -> tuple[str, ...]:
    """`fallback_note` of each pick that has one, in order."""
    notes = (fallback_note(pick, pool, host, entry_mode) for pick in picks)
    return tuple(note for note in notes if note is not None)
