"""The catalog: validated profiles, providers, hosts and configs.

Public API: the models of `okstra_core.catalog.models` and the loaders of
`okstra_core.catalog.loaders`.
"""

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
    parse_global_config,
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
