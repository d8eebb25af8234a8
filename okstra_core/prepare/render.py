"""Rendering the lead prompt and the task index from `prompts/templates/*.j2`.

jinja2 is imported only when something is rendered (`template_env`): the headless
wizard path, and a prepare refused before it renders, never pay for it. A workspace
may replace any template, so every template (bundled ones too) renders in jinja2's
`SandboxedEnvironment`: no attribute access to internals (`__class__`, `__globals__`,
…), so a template cannot reach the interpreter or run commands; a sandbox violation is
a `DataFileError` naming the template. The compiled code of a template is kept between
processes (see `okstra_core.prepare.template_env`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import DataFileError
from ..paths import resource, user_dirs
from ..store import decode_utf8, read_bytes


def render_template(name: str, context: Mapping[str, Any], env: Mapping[str, str]) -> str:
    """Render `prompts/templates/<name>` sandboxed, with StrictUndefined and no autoescaping.

    Args:
        name: the template file name, e.g. "lead.md.j2".
        context: the template variables.
        env: environment variables (for `OKSTRA_WORKSPACE`, and `OKSTRA_HOME` for the
            cache of compiled templates).

    Raises:
        DataFileError: a missing template, a syntax error, an undefined variable or
            something the sandbox forbids — naming the template file.
    """
    import jinja2  # deferred: only prepare renders (keeps `okstra wizard step` lean)

    from . import template_env

    path = resource(f"templates/{name}", env)
    # A regular UTF-8 file only (never a FIFO or device), size-capped.
    source = decode_utf8(
        read_bytes(path, what="template", error=DataFileError), path, error=DataFileError
    )
    environment = template_env.environment(name, path, source, user_dirs(env).cache)
    try:
        template = environment.get_template(name)
        return template.render(**context)
    except jinja2.TemplateSyntaxError as exc:
        raise DataFileError(
            f"template syntax error: {exc.message}", path=path, field=f"line {exc.lineno}"
        ) from None
    except jinja2.UndefinedError as exc:
        raise DataFileError(f"template uses an undefined value: {exc.message}", path=path) from None
    except jinja2.exceptions.SecurityError as exc:
        raise DataFileError(f"template refused by the sandbox: {exc}", path=path) from None
