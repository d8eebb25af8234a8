"""The rules of okstra's data files that need no record: ids and launch templates.

Every rule raises `DataProblem` (the field as a dotted path, and what was expected); the
loaders add the file and turn it into a `DataFileError`.
"""

from __future__ import annotations

import re
import string


class DataProblem(ValueError):
    """A rule of a data file broken: the field (dotted path) and what was expected."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


# Placeholders a launch template (argv element or env value) may use.
TEMPLATE_PLACEHOLDERS: frozenset[str] = frozenset(
    {"cli", "session_id", "model", "prompt", "prompt_file", "kickoff", "project_root"}
)
# A worker template may also name the file its final message goes to, and where the
# access arguments go (`{access}`, a whole element of its own).
WORKER_PLACEHOLDERS: frozenset[str] = TEMPLATE_PLACEHOLDERS | {"result_file", "access"}
# `launch.mcp` and `launch.mcp_env` name okstra's MCP server of the run.
MCP_PLACEHOLDERS: frozenset[str] = frozenset({"mcp_config", "mcp_command_toml", "mcp_args_toml"})
# A discover glob may only read environment variables: `{env.CODEX_HOME}`.
DISCOVER_PLACEHOLDERS = re.compile(r"env\.[A-Za-z_][A-Za-z0-9_]*")

# Role, duty, provider and model ids end up in step ids (`role-model:<role>:<n>`),
# argv (`--role-model role=provider/model`) and file names: keep them plain.
ID_PATTERN = re.compile(r"[a-z0-9][a-z0-9_.-]*")
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def check_id(value: str, where: str) -> None:
    if not ID_PATTERN.fullmatch(value):
        raise DataProblem(
            where, f"expected an id of lower-case letters, digits, '.', '-', '_', got {value!r}"
        )


def template_fields(template: str) -> list[str]:
    """The `{placeholder}` names of one template (`{{`/`}}` escape a brace; unbalanced
    braces raise `ValueError`)."""
    return [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]


def check_template(
    template: str, where: str, allowed: frozenset[str] = TEMPLATE_PLACEHOLDERS
) -> None:
    """One template string uses only `allowed` placeholders, with balanced braces."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise DataProblem(
            where,
            f"unbalanced braces in {template!r} ({exc}); write {{{{ or }}}} for a literal brace",
        ) from None
    shown_allowed = ", ".join("{" + p + "}" for p in sorted(allowed))
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if name not in allowed or spec or conversion:
            shown = "{" + name + (f"!{conversion}" if conversion else "")
            shown += (f":{spec}" if spec else "") + "}"
            raise DataProblem(
                where, f"unknown placeholder {shown}: expected one of {shown_allowed}"
            )


def check_discover_glob(glob: str) -> None:
    where = "launch.discover.glob"
    try:
        parsed = list(string.Formatter().parse(glob))
    except ValueError as exc:
        raise DataProblem(where, f"unbalanced braces ({exc})") from None
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if not DISCOVER_PLACEHOLDERS.fullmatch(name) or spec or conversion:
            raise DataProblem(
                where,
                f"unknown placeholder {{{name}}}: a discover glob may only use "
                "{env.NAME} (an environment variable)",
            )


def check_mcp_launch(mcp: tuple[str, ...] | None, env: dict[str, str]) -> None:
    """`launch.mcp`: a non-empty argv fragment (no program of its own) naming the
    server only through the MCP placeholders; `launch.mcp_env` likewise."""
    if mcp is None:
        if env:
            raise DataProblem("launch.mcp_env", "only used with launch.mcp")
        return
    if not mcp and not env:
        raise DataProblem("launch.mcp", "expected the arguments that give the CLI an MCP server")
    for i, element in enumerate(mcp):
        check_template(element, f"launch.mcp[{i}]", MCP_PLACEHOLDERS)
    for name, value in env.items():
        if not ENV_NAME.fullmatch(name):
            raise DataProblem(f"launch.mcp_env.{name}", "expected an environment variable name")
        check_template(value, f"launch.mcp_env.{name}", MCP_PLACEHOLDERS)


def _worker_fields(argv: tuple[str, ...], where: str, first: str) -> list[str]:
    """The placeholders a worker argv template `where` names, each element checked:
    `{cli}` first (else refused naming `first`), `{access}` only as a whole element."""
    if not argv or argv[0] != "{cli}":
        raise DataProblem(first, 'expected a non-empty argv array whose first element is "{cli}"')
    used: list[str] = []
    for i, element in enumerate(argv):
        check_template(element, f"{where}[{i}]", WORKER_PLACEHOLDERS)
        names = template_fields(element)
        if "access" in names and element != "{access}":
            raise DataProblem(
                f"{where}[{i}]",
                "{access} stands for zero or more arguments: it must be an element of its own",
            )
        used.extend(names)
    return used


def check_worker_launch(
    worker: tuple[str, ...] | None,
    read_only: tuple[str, ...],
    write: tuple[str, ...],
    *,
    discovers_session: bool,
) -> None:
    """The rules of `launch.worker` and `[launch.access]`.

    A worker template starts with `{cli}`, passes `{model}`, uses `{access}` at most once
    as a whole element, and no `{session_id}` when the CLI mints its own id; the access
    arguments use the worker's placeholders but `{access}`, and `read_only` is required.
    """
    if worker is None:
        if read_only or write:
            raise DataProblem(
                "launch.access", "only used with launch.worker (a provider that runs workers)"
            )
        return
    used = _worker_fields(
        worker, "launch.worker", "launch.worker[0]" if worker else "launch.worker"
    )
    if used.count("access") > 1:
        raise DataProblem("launch.worker", "{access} may appear only once")
    if "model" not in used:
        raise DataProblem("launch.worker", "expected {model}: a worker runs its bound model")
    if discovers_session and "session_id" in used:
        raise DataProblem(
            "launch.worker",
            'the CLI mints the id when session_id = "discover": '
            "{session_id} cannot be passed to launch.worker",
        )
    allowed = WORKER_PLACEHOLDERS - {"access"}
    for name, flags in (("read_only", read_only), ("write", write)):
        for i, element in enumerate(flags):
            check_template(element, f"launch.access.{name}[{i}]", allowed)
            if discovers_session and "session_id" in template_fields(element):
                raise DataProblem(
                    f"launch.access.{name}[{i}]",
                    'the CLI mints the id when session_id = "discover": '
                    "{session_id} cannot be passed",
                )
    if not read_only:
        raise DataProblem(
            "launch.access.read_only",
            "expected the arguments that keep a worker from changing the project "
            "(a read-only role runs with them)",
        )


def check_worker_resume(
    worker: tuple[str, ...] | None, resume: tuple[str, ...] | None, pattern: str | None
) -> None:
    """The rules of `launch.worker_resume` (it continues a worker: `{cli}` first, names
    `{session_id}` and `{model}`, `{access}` at most once as a whole element) and
    `launch.worker_session_pattern` (a regex with exactly one group, the id)."""
    if resume is None:
        return
    if worker is None:
        raise DataProblem("launch.worker_resume", "only used with launch.worker")
    used = _worker_fields(resume, "launch.worker_resume", "launch.worker_resume")
    for name, why in (("session_id", "the session it continues"), ("model", "its bound model")):
        if name not in used:
            raise DataProblem("launch.worker_resume", f"expected {{{name}}}: {why}")
    if used.count("access") > 1:
        raise DataProblem("launch.worker_resume", "{access} may appear only once")
    if pattern is not None:
        try:
            groups = re.compile(pattern).groups
        except re.error as exc:
            raise DataProblem("launch.worker_session_pattern", f"not a regex: {exc}") from None
        if groups != 1:
            raise DataProblem(
                "launch.worker_session_pattern", "expected exactly one group (the session id)"
            )
