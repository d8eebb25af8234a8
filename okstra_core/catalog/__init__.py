"""The catalog: validated profiles, providers, hosts and configs.

Public API: the models of `okstra_core.catalog.models` and the loaders of
`okstra_core.catalog.loaders` (reading) and `okstra_core.catalog.validate` (checking).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_names

if TYPE_CHECKING:
    from .loaders import (
        BUNDLED_PROVIDER_ORDER,
        TEMPLATE_PLACEHOLDERS,
        Catalog,
        ProjectConfig,
        detect_host,
        load_catalog,
        load_global_config,
        load_host,
        load_profile,
        load_project_config,
        load_provider,
        template_fields,
    )
    from .models import (
        LEADER,
        TASK_TYPES,
        AccessSpec,
        DiscoverSpec,
        EntryMode,
        GlobalConfig,
        HostSpec,
        LaunchSpec,
        ModelDefaults,
        ModelSpec,
        Profile,
        ProviderSpec,
        RoleKind,
        RoleRequirement,
        Runner,
    )
    from .validate import (
        parse_global_config,
    )

# The names load on first use: importing one module of the catalog (the models, for
# a command that only reads a run) must not load the loaders and their caches.
_LAZY = {
    "BUNDLED_PROVIDER_ORDER": ".loaders",
    "TEMPLATE_PLACEHOLDERS": ".loaders",
    "Catalog": ".loaders",
    "ProjectConfig": ".loaders",
    "detect_host": ".loaders",
    "load_catalog": ".loaders",
    "load_global_config": ".loaders",
    "load_host": ".loaders",
    "load_profile": ".loaders",
    "load_project_config": ".loaders",
    "load_provider": ".loaders",
    "template_fields": ".loaders",
    "LEADER": ".models",
    "TASK_TYPES": ".models",
    "AccessSpec": ".models",
    "DiscoverSpec": ".models",
    "EntryMode": ".models",
    "GlobalConfig": ".models",
    "HostSpec": ".models",
    "LaunchSpec": ".models",
    "ModelDefaults": ".models",
    "ModelSpec": ".models",
    "Profile": ".models",
    "ProviderSpec": ".models",
    "RoleKind": ".models",
    "RoleRequirement": ".models",
    "Runner": ".models",
    "parse_global_config": ".validate",
}

__getattr__ = lazy_names(__name__, _LAZY)

__all__ = [
    "BUNDLED_PROVIDER_ORDER",
    "LEADER",
    "TASK_TYPES",
    "TEMPLATE_PLACEHOLDERS",
    "AccessSpec",
    "Catalog",
    "DiscoverSpec",
    "EntryMode",
    "GlobalConfig",
    "HostSpec",
    "LaunchSpec",
    "ModelDefaults",
    "ModelSpec",
    "Profile",
    "ProjectConfig",
    "ProviderSpec",
    "RoleKind",
    "RoleRequirement",
    "Runner",
    "detect_host",
    "load_catalog",
    "load_global_config",
    "load_host",
    "load_profile",
    "load_project_config",
    "load_provider",
    "parse_global_config",
    "template_fields",
]
