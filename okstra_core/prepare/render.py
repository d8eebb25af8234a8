"""Rendering the lead prompt and the task index from `prompts/templates/*.j2`.

jinja2 loads only when something renders. Every template (a workspace may replace any)
renders sandboxed and bounded (`template_bounds`); whatever goes wrong inside one is a
`DataFileError` naming the template (exit 2), and nothing is written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import DataFileError
from ..paths import resource, user_dirs
from ..store import decode_utf8, read_bytes

# How much of an error a template raised is quoted (a template chooses its message).
_SAID = 300


def render_template(name: str, context: Mapping[str, Any], env: Mapping[str, str]) -> str:
    """Render `prompts/templates/<name>` sandboxed and bounded (StrictUndefined, no
    autoescaping); any failure is a DataFileError naming the template file."""
    import jinja2  # deferred: only prepare renders (keeps `okstra wizard step` lean)

    from . import template_bounds, template_env

    path = resource(f"templates/{name}", env)
    # A regular UTF-8 file only (never a FIFO or device), size-capped.
    source = decode_utf8(
        read_bytes(path, what="template", error=DataFileError), path, error=DataFileError
    )
    environment = template_env.environment(name, path, source, user_dirs(env).cache)
    try:
        with template_bounds.bounded(template_bounds.Budget(context)):
            template = environment.get_template(name)
            return template_bounds.render_bounded(template, context)
    except jinja2.TemplateSyntaxError as exc:
        raise DataFileError(
            f"template syntax error: {exc.message}", path=path, field=f"line {exc.lineno}"
        ) from None
    except jinja2.UndefinedError as exc:
        raise DataFileError(f"template uses an undefined value: {exc.message}", path=path) from None
    except jinja2.exceptions.SecurityError as exc:
        raise DataFileError(f"template refused by the sandbox: {exc}", path=path) from None
    except template_bounds.BoundExceeded as exc:
        raise DataFileError(str(exc), path=path) from None
    except RecursionError:
        raise DataFileError(
            "template recursed too deeply (a macro calling itself?)", path=path
        ) from None
    except MemoryError:
        raise DataFileError("template ran out of memory", path=path) from None
    except Exception as exc:  # the template's own code raised: its error, not okstra's
        said = str(exc)
        said = said if len(said) <= _SAID else said[: _SAID - 1] + "…"
        raise DataFileError(f"template failed: {type(exc).__name__}: {said}", path=path) from None
