"""The jinja2 environment templates render in (sandboxed, bounded), compiled code kept.

Compiling costs more than rendering, so jinja2's bytecode is kept as derived data
(`okstra_core.derived`, user directories only: a repository cannot plant an entry),
keyed by the template and `STAMP` (jinja2, Python, environment class, options); jinja2
drops code whose source checksum differs. The sandbox checks run at render time through
the environment, cached code or not. An unreadable cache only makes prepare slower.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jinja2
import jinja2.bccache
import jinja2.exceptions

from .. import derived
from .template_bounds import BoundedEnvironment

# The compiled code depends on this module and on the bounds the code calls.
TEMPLATES = derived.Kind(
    "templates", keep=8, code=("prepare/template_env.py", "prepare/template_bounds.py")
)
# How every template renders; part of the cache key (`STAMP`).
OPTIONS: dict[str, Any] = {
    "undefined": jinja2.StrictUndefined,
    "autoescape": False,
    "keep_trailing_newline": True,
    "trim_blocks": True,
    "lstrip_blocks": True,
}
# The compiled code calls the bounds: the class is in the cache key (`STAMP`).
ENVIRONMENT = BoundedEnvironment
# What decides the code jinja2 compiles from a source, besides the source itself.
STAMP = "\0".join(
    [
        f"jinja2 {jinja2.__version__}",
        sys.version,
        sys.implementation.cache_tag or "",
        f"{ENVIRONMENT.__module__}.{ENVIRONMENT.__qualname__}",
        *(f"{key}={value!r}" for key, value in sorted(OPTIONS.items())),
    ]
).encode("utf-8", "surrogateescape")


class OneTemplate(jinja2.BaseLoader):
    """A loader holding the one template source the caller has read (safely)."""

    def __init__(self, name: str, path: Path, source: str) -> None:
        self.name = name
        self.path = path
        self.source = source

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str | None, Callable[[], bool] | None]:
        if template != self.name:
            raise jinja2.TemplateNotFound(template)
        # Up to date for as long as it is used: one environment renders once.
        return self.source, str(self.path), lambda: True


class CodeCache(jinja2.BytecodeCache):
    """jinja2's bytecode cache, kept as derived data (see the module)."""

    def __init__(self, cache: Path) -> None:
        self.cache = cache

    def _key(self, bucket: jinja2.bccache.Bucket) -> str:
        return derived.key(TEMPLATES, STAMP, bucket.key)

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        payload = derived.recall(self.cache, TEMPLATES, self._key(bucket))
        if payload is None:
            return
        try:
            # Checks jinja2's magic and the source checksum; a mismatch leaves no code.
            bucket.bytecode_from_string(payload)
        except Exception:  # a stale or damaged entry is a miss, whatever it raised
            bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        derived.keep(self.cache, TEMPLATES, self._key(bucket), bucket.bytecode_to_string())


def environment(name: str, path: Path, source: str, cache: Path) -> BoundedEnvironment:
    """An environment rendering `source` as template `name`, compiled code kept in `cache`."""
    return ENVIRONMENT(
        loader=OneTemplate(name, path, source), bytecode_cache=CodeCache(cache), **OPTIONS
    )
