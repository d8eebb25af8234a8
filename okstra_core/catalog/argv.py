"""Provider argv templates → argv lists. No shell is ever involved.

A template is a tuple of strings; each element becomes exactly one argv element, with
its placeholders replaced (a placeholder may sit inside an element, e.g.
`--prompt-interactive={kickoff}`). Values are inserted verbatim: quotes, `$(…)`, `;`
and newlines reach the CLI as they are.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from ..errors import DataFileError
from .rules import TEMPLATE_PLACEHOLDERS

# Placeholders a launch template may use (besides `{env.NAME}`).
PLACEHOLDERS = TEMPLATE_PLACEHOLDERS
# A worker template adds the file of its final message (`{access}` is expanded as a
# whole element before rendering: see `worker_argv`).
WORKER_PLACEHOLDERS: frozenset[str] = PLACEHOLDERS | {"result_file"}

_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")
_ENV_NAME = re.compile(r"env\.([A-Za-z_][A-Za-z0-9_]*)")


def placeholders_in(template: Sequence[str]) -> set[str]:
    """The placeholder names a template uses (`env.X` included as such)."""
    found: set[str] = set()
    for element in template:
        for match in _TOKEN.finditer(element):
            if match.group(1) is not None:
                found.add(match.group(1))
    return found


def render_element(
    element: str,
    values: Mapping[str, str],
    env: Mapping[str, str],
    *,
    source: str,
    field: str,
    env_defaults: Mapping[str, str] | None = None,
    known: frozenset[str] = PLACEHOLDERS,
) -> str:
    """Replace the placeholders of one template element (`values` by name, `env` and then
    `env_defaults` for `{env.NAME}`; `source` and `field` name it in errors).

    Raises:
        DataFileError: an unknown placeholder, one with no value here, an unset
            `{env.NAME}` without default, or a lone brace.
    """
    out: list[str] = []
    pos = 0
    for match in _TOKEN.finditer(element):
        out.append(element[pos : match.start()])
        pos = match.end()
        token = match.group(0)
        if token in ("{{", "}}"):
            out.append(token[0])
            continue
        name = match.group(1)
        if name is None:
            raise DataFileError(
                f"lone {token!r} in {element!r}; write {token * 2!r} for a literal brace",
                path=source,
                field=field,
            )
        env_match = _ENV_NAME.fullmatch(name)
        if env_match is not None:
            var = env_match.group(1)
            value = env.get(var) or (env_defaults or {}).get(var)
            if value is None:
                raise DataFileError(
                    f"{{env.{var}}} is used but {var} is not set", path=source, field=field
                )
            out.append(value)
            continue
        if name not in known:
            shown = ", ".join(sorted("{" + p + "}" for p in known))
            raise DataFileError(
                f"unknown placeholder {{{name}}}; expected one of {shown} or {{env.NAME}}",
                path=source,
                field=field,
            )
        if name not in values:
            raise DataFileError(
                f"placeholder {{{name}}} has no value here", path=source, field=field
            )
        out.append(values[name])
    out.append(element[pos:])
    return "".join(out)


def render_argv(
    template: Sequence[str],
    values: Mapping[str, str],
    env: Mapping[str, str],
    *,
    source: str,
    field: str,
    known: frozenset[str] = PLACEHOLDERS,
) -> tuple[str, ...]:
    """Render every element of an argv template (one element in, one out); an empty
    template is a `DataFileError` too."""
    if not template:
        raise DataFileError("the argv template is empty", path=source, field=field)
    return tuple(
        render_element(element, values, env, source=source, field=f"{field}[{index}]", known=known)
        for index, element in enumerate(template)
    )


def render_env(
    template: Mapping[str, str],
    values: Mapping[str, str],
    env: Mapping[str, str],
    *,
    source: str,
    field: str,
    known: frozenset[str] = PLACEHOLDERS,
) -> dict[str, str]:
    """Render `launch.env` values (names are taken literally)."""
    return {
        name: render_element(
            value, values, env, source=source, field=f"{field}.{name}", known=known
        )
        for name, value in template.items()
    }
