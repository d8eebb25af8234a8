"""The jinja2 environment prepare's templates render in, compiled code kept between processes.

Imported by `okstra_core.prepare.render` only when something is rendered. Every template
(bundled ones too: a workspace may replace any) renders in jinja2's
`SandboxedEnvironment`, with StrictUndefined and no autoescaping, and within bounds of
time, output, size and loop iterations (`template_bounds.BoundedEnvironment`).

Compiling a template to Python code costs more than rendering it, so the compiled
code is kept between processes, through jinja2's own bytecode cache (`CodeCache`):

* The code is derived data (`okstra_core.derived`, kind `TEMPLATES`): an entry is used
  only under the derived-data rules (private directories, a regular file of this user
  that nobody else may write, never through a link, its key and checksum inside);
  anything else is a miss (the template is compiled as usual). The directory is under
  the user directories, never the project: a repository cannot plant an entry.
* The entry's key is derived from jinja2's bucket key (the template's name and file)
  together with jinja2's version, the Python build, the environment's class and its
  options (`STAMP`): code compiled by another jinja2 or with other options is never
  found. Inside, jinja2 stores the checksum of the source it compiled and drops the
  code when the template's text differs: an edited template is compiled again.
* The sandbox is not part of the code: the compiled code does every attribute access
  and call through the environment (`environment.getattr`, `environment.call`), whose
  sandbox checks run at render time, cached code or not.
* A cache that cannot be read or written only makes prepare slower: a miss compiles,
  a failed write is ignored.
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
# The code a template compiles to calls the bounds (`bounded_iter`, `bounded_concat`):
# the class is part of the cache key, so code compiled without them is never run.
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
    """An environment that renders `source` (the text of `path`) as template `name`.

    Its compiled code is looked up in, and kept under, the user cache directory `cache`.
    """
    return ENVIRONMENT(
        loader=OneTemplate(name, path, source), bytecode_cache=CodeCache(cache), **OPTIONS
    )
