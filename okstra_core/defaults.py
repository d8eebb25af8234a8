"""Model defaults scopes: project > global > bundled.

`modelDefaults` (in ``.okstra/project.json`` and ``<config dir>/config.json``) maps a
role to a non-empty array of model refs. The candidates of a role are the project
scope's models, then the global scope's, then the bundled ``default_for`` models, each
model once (first scope wins), so a person's own preferences come first and the
bundled ones still fill larger teams.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from .catalog.models import (
    LEADER,
    EntryMode,
    GlobalConfig,
    HostSpec,
    ModelDefaults,
    Profile,
    ProviderSpec,
)
from .errors import DataFileError, OkstraError, UsageError
from .pool import ModelPool, PoolModel
from .records import dataclass, field
from .vocabulary import CURRENT_SESSION

__all__ = ["DefaultScopes", "known_roles", "load_scopes", "validate_model_defaults"]


class _CatalogLike(Protocol):
    """What `load_scopes` reads from a loaded catalog."""

    @property
    def providers(self) -> Sequence[ProviderSpec]: ...

    @property
    def profiles(self) -> Mapping[str, Profile]: ...

    @property
    def config(self) -> GlobalConfig: ...


def known_roles(providers: Iterable[ProviderSpec], profiles: Iterable[Profile]) -> set[str]:
    """Every role a `modelDefaults` entry may name: leader, provider and profile roles."""
    roles = {LEADER}
    for provider in providers:
        roles.update(provider.roles)
    for profile in profiles:
        roles.update(r.role for r in profile.roles)
    return roles


def _model_keys(providers: Iterable[ProviderSpec]) -> set[str]:
    """Every accepted spelling of a model: ref, and provider/alias, case-folded."""
    keys: set[str] = set()
    for provider in providers:
        for spec in provider.models:
            keys.add(f"{provider.id}/{spec.id}".casefold())
            keys.update(f"{provider.id}/{alias}".casefold() for alias in spec.aliases)
    return keys


def validate_model_defaults(
    defaults: ModelDefaults,
    providers: Iterable[ProviderSpec],
    roles: Collection[str],
) -> None:
    """Check a `modelDefaults` block: known roles, non-empty arrays of known model refs.

    Raises:
        DataFileError: naming the file (``defaults.source``), the field
            (``modelDefaults.<role>`` or ``modelDefaults.<role>[i]``) and what was expected.
    """
    if not defaults.by_role:
        return  # nothing configured: skip indexing every model of the registry
    keys = _model_keys(providers)
    path = defaults.source or None
    for role, refs in defaults.by_role.items():
        where = f"modelDefaults.{role}"
        if role not in roles:
            raise DataFileError(
                f"unknown role {role!r} (known: {', '.join(sorted(roles))})",
                path=path,
                field=where,
            )
        if not refs:
            raise DataFileError("expected a non-empty array of model refs", path=path, field=where)
        seen: set[str] = set()
        for index, ref in enumerate(refs):
            item = f"{where}[{index}]"
            if ref.casefold() not in keys:
                raise DataFileError(
                    f"unknown model ref {ref!r} (expected 'provider/model_id' of a known model)",
                    path=path,
                    field=item,
                )
            if ref.casefold() in seen:
                raise DataFileError(f"model ref {ref!r} is listed twice", path=path, field=item)
            seen.add(ref.casefold())


@dataclass(frozen=True)
class DefaultScopes:
    """The configured model defaults, highest scope first (bundled ones come from the pool).

    Attributes:
        project: ``.okstra/project.json`` → ``modelDefaults``.
        global_: ``<config dir>/config.json`` → ``modelDefaults``.
    """

    project: ModelDefaults = field(default_factory=ModelDefaults)
    global_: ModelDefaults = field(default_factory=ModelDefaults)

    def _scoped(self) -> tuple[tuple[ModelDefaults, str], ...]:
        return ((self.project, "default:project"), (self.global_, "default:global"))

    def candidates(self, role: str, pool: ModelPool) -> list[tuple[PoolModel, str]]:
        """The default models of `role` with their provenance, highest scope first.

        Each model appears once, with its highest scope's provenance
        (``default:project`` | ``default:global`` | ``default:bundled``).

        Raises:
            UsageError: a configured ref is unknown to the pool.
        """
        out: list[tuple[PoolModel, str]] = []
        seen: set[str] = set()
        for defaults, provenance in self._scoped():
            for ref in defaults.by_role.get(role, ()):
                model = pool.lookup(ref)
                if model.ref not in seen:
                    seen.add(model.ref)
                    out.append((model, provenance))
        for model in pool.default_candidates(role):
            if model.ref not in seen:
                seen.add(model.ref)
                out.append((model, "default:bundled"))
        return out

    def validate(
        self, pool: ModelPool, host: HostSpec, entry_mode: EntryMode, roles: Iterable[str]
    ) -> None:
        """Refuse configured defaults that are unavailable for a role of this team.

        Args:
            pool: the model pool (availability).
            host: the host runtime.
            entry_mode: the entry mode.
            roles: the roles of the team that need a model (the leader is skipped in
                current-session mode: it has no model).

        Raises:
            OkstraError: naming every unavailable configured default — model, role,
                reason and the file it is configured in.
        """
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


def load_scopes(project_root: Path | None, catalog: _CatalogLike) -> DefaultScopes:
    """Read the project and global model defaults and validate them against the catalog.

    Args:
        project_root: the project directory (``None``: no project scope).
        catalog: a loaded `Catalog` (providers, profiles, global config).

    Raises:
        DataFileError: a malformed file, an unknown role or an unknown model ref.
    """
    from .catalog import loaders  # deferred: loaders import the data layer

    global_defaults = catalog.config.model_defaults
    project_defaults = ModelDefaults()
    if project_root is not None:
        project_defaults = loaders.load_project_config(project_root).model_defaults
    roles = known_roles(catalog.providers, catalog.profiles.values())
    for defaults in (project_defaults, global_defaults):
        validate_model_defaults(defaults, catalog.providers, roles)
    return DefaultScopes(project=project_defaults, global_=global_defaults)
