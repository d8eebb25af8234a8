"""A package's names loaded on first use (a module `__getattr__`, PEP 562)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def lazy_names(package: str, modules: Mapping[str, str]) -> Callable[[str], Any]:
    """The `__getattr__` of `package` for `modules` (name -> relative module, ".plan")."""
    namespace = sys.modules[package].__dict__

    def load(name: str) -> Any:
        module = modules.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        return value

    return load


def by_module(modules: Mapping[str, Iterable[str]]) -> dict[str, str]:
    """The table `lazy_names` reads (name -> module) from each module's names."""
    return {name: module for module, names in modules.items() for name in names}
