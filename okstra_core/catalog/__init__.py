"""The catalog: validated profiles, providers, hosts and configs.

The records are in `models`; `loaders` reads the files, `validate` checks them. The names
load on first use: a command that only reads a run imports the models, not the loaders
and their caches.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import by_module, lazy_names

if TYPE_CHECKING:
    from .loaders import BUNDLED_PROVIDER_ORDER as BUNDLED_PROVIDER_ORDER
    from .loaders import Catalog as Catalog
    from .loaders import detect_host as detect_host
    from .loaders import load_catalog as load_catalog
    from .loaders import load_global_config as load_global_config
    from .loaders import load_host as load_host
    from .loaders import load_profile as load_profile
    from .loaders import load_project_config as load_project_config
    from .loaders import load_provider as load_provider
    from .models import LEADER as LEADER
    from .models import TASK_TYPES as TASK_TYPES
    from .models import GlobalConfig as GlobalConfig
    from .models import ProviderSpec as ProviderSpec
    from .models import RoleKind as RoleKind
    from .rules import template_fields as template_fields
    from .validate import parse_global_config as parse_global_config

_LAZY = by_module(
    {
        ".loaders": (
            "BUNDLED_PROVIDER_ORDER",
            "Catalog",
            "detect_host",
            "load_catalog",
            "load_global_config",
            "load_host",
            "load_profile",
            "load_project_config",
            "load_provider",
        ),
        ".models": ("LEADER", "TASK_TYPES", "GlobalConfig", "ProviderSpec", "RoleKind"),
        ".rules": ("template_fields",),
        ".validate": ("parse_global_config",),
    }
)
__all__ = sorted(_LAZY)
__getattr__ = lazy_names(__name__, _LAZY)
