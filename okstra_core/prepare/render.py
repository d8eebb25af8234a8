"""Rendering the lead prompt and the task index from `prompts/templates/*.j2`.

jinja2 is imported only when something is rendered (`template_env`): the headless
wizard path, and a prepare refused before it renders, never pay for it. A workspace
may replace any template, so every template (bundled ones too) renders in jinja2's
`SandboxedEnvironment`: no attribute access to internals (`__class__`, `__globals__`,
…), so a template cannot reach the interpreter or run commands. It renders within
bounds (`template_bounds`): 5 s of processor time, 1 MiB of output and of any value
it builds beyond the text it is given, 100,000 numbers per `range()`, 1,000,000 loop
iterations. Whatever goes wrong inside a template — a sandbox violation, a bound, an
undefined name, an error it raises, a recursion too deep, memory — is a
`DataFileError` naming the template (exit 2), and nothing is written. The compiled
code of a template is kept between processes (see `okstra_core.prepare.template_env`).
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
    """Render `prompts/templates/<name>` sandboxed and bounded, with StrictUndefined and
    no autoescaping.

    Args:
        name: the template file name, e.g. "lead.md.j2".
        context: the template variables.
        env: environment variables (for `OKSTRA_WORKSPACE`, and `OKSTRA_HOME` for the
            cache of compiled templates).

    Raises:
        DataFileError: a missing template, a syntax error, an undefined variable,
            something the sandbox forbids, a bound exceeded, or any error raised while
            rendering — naming the template file.
    """
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
