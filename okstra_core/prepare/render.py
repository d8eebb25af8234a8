"""Rendering the lead prompt and the task index from `prompts/templates/*.j2`.

jinja2 is imported here only, and only when something is rendered: the headless
wizard path never pays for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import DataFileError
from ..paths import resource


def render_template(name: str, context: Mapping[str, Any], env: Mapping[str, str]) -> str:
    """Render `prompts/templates/<name>` with StrictUndefined and no autoescaping.

    Args:
        name: the template file name, e.g. "lead.md.j2".
        context: the template variables.
        env: environment variables (for `OKSTRA_WORKSPACE`).

    Raises:
        DataFileError: a missing template, a syntax error, or an undefined variable —
            naming the template file.
    """
    import jinja2  # deferred: only prepare renders (keeps `okstra wizard step` lean)

    path = resource(f"templates/{name}", env)
    if not path.is_file():
        raise DataFileError("template not found", path=path)
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DataFileError(f"template is not readable: {exc}", path=path) from None
    environment = jinja2.Environment(
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    try:
        template = environment.from_string(source)
        return template.render(**context)
    except jinja2.TemplateSyntaxError as exc:
        raise DataFileError(
            f"template syntax error: {exc.message}", path=path, field=f"line {exc.lineno}"
        ) from None
    except jinja2.UndefinedError as exc:
        raise DataFileError(f"template uses an undefined value: {exc.message}", path=path) from None
