"""A package's names loaded on first use (a module `__getattr__`, PEP 562).

A package lists which of its modules defines each name; importing the package (or one
of its modules) then loads nothing else, and a name's module is imported the first time
the name is used. The value is kept in the package's namespace, so the lookup runs once.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["by_module", "lazy_names"]


def lazy_names(package: str, modules: Mapping[str, str]) -> Callable[[str], Any]:
    """The `__getattr__` of `package` for `modules` (name -> relative module, ".plan").

    Use as `__getattr__ = lazy_names(__name__, _LAZY)` in the package's `__init__`.
    """
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
    """The table `lazy_names` reads (name -> module) from each module's names.

    Use as `_LAZY = by_module({".plan": ("LaunchPlan", "plan_launch"), ...})`, with
    `__all__ = sorted(_LAZY)`: each name is listed once, beside its module (the package
    re-exports them to type checkers as `from .plan import LaunchPlan as LaunchPlan`).
    """
    return {name: module for module, names in modules.items() for name in names}
