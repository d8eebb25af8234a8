"""The catalog: validated profiles, providers, hosts and configs.

Public API: the models of `okstra_core.catalog.models` and the loaders of
`okstra_core.catalog.loaders` (reading) and `okstra_core.catalog.validate` (checking).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_names

if TYPE_CHECKING:
    from .loaders import BUNDLED_PROVIDER_ORDER as BUNDLED_PROVIDER_ORDER
    from .loaders import TEMPLATE_PLACEHOLDERS as TEMPLATE_PLACEHOLDERS
    from .loaders import Catalog as Catalog
    from .loaders import ProjectConfig as ProjectConfig
    from .loaders import detect_host as detect_host
    from .loaders import load_catalog as load_catalog
    from .loaders import load_global_config as load_global_config
    from .loaders import load_host as load_host
    from .loaders import load_profile as load_profile
    from .loaders import load_project_config as load_project_config
    from .loaders import load_provider as load_provider
    from .loaders import template_fields as template_fields
    from .models import LEADER as LEADER
    from .models import TASK_TYPES as TASK_TYPES
    from .models import AccessSpec as AccessSpec
    from .models import DiscoverSpec as DiscoverSpec
    from .models import EntryMode as EntryMode
    from .models import GlobalConfig as GlobalConfig
    from .models import HostSpec as HostSpec
    from .models import LaunchSpec as LaunchSpec
    from .models import ModelDefaults as ModelDefaults
    from .models import ModelSpec as ModelSpec
    from .models import Profile as Profile
    from .models import ProviderSpec as ProviderSpec
    from .models import RoleKind as RoleKind
    from .models import RoleRequirement as RoleRequirement
    from .models import Runner as Runner
    from .validate import parse_global_config as parse_global_config

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

__all__ = sorted(_LAZY)
