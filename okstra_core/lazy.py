"""A package's names loaded on first use (a module `__getattr__`, PEP 562).

A package lists which of its modules defines each name; importing the package (or one
of its modules) then loads nothing else, and a name's module is imported the first time
the name is used. The value is kept in the package's namespace, so the lookup runs once.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_names"]


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
