"""The run flags (`--role-count`, `--role-model`, the whole renderArgv) → `RunRequest`.

Shared by `okstra team` and `okstra prepare`; `request_from_argv` is where a request from
the command line gets its checks; `host_context` is the one reading of the host session
context and `OKSTRA_HOST_MODEL` / `OKSTRA_HOST_EFFORT`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, cast

import orjson

from ..catalog import load_catalog
from ..catalog.models import LEADER, TASK_TYPES, Profile
from ..discovery import default_project_root
from ..documents.host import given_context
from ..environment import Environment
from ..errors import UsageError
from ..pool import ModelPool, canonical_model, reported_host_effort, reported_host_model
from ..records import RecordError, validate
from ..request import (
    ENTRY_MODES,
    EntryMode,
    HostSessionContext,
    RunRequest,
    usage_error,
)
from ..vocabulary import SPAWN_PROCESS

if TYPE_CHECKING:
    import argparse


def _split(value: str, flag: str, shape: str, problems: list[str]) -> tuple[str, str] | None:
    role, sep, rest = value.partition("=")
    role, rest = role.strip(), rest.strip()
    if not sep or not role or not rest:
        problems.append(f"{flag} {value!r}: expected {shape}")
        return None
    return role, rest


def _role_problem(role: str, profile: Profile, flag: str, value: str) -> str | None:
    if role == LEADER:
        return None
    requirement = profile.role(role)
    if requirement is None:
        known = ", ".join([LEADER, *(r.role for r in profile.static_roles)])
        return (
            f"{flag} {value!r}: unknown role {role!r} for task type "
            f"{profile.task_type!r} (roles: {known})"
        )
    if requirement.dynamic:
        return f"{flag} {value!r}: role {role!r} is dynamic (spawned at run time by the lead)"
    return None


def _static_roles(
    values: Sequence[str], profile: Profile, flag: str, shape: str, problems: list[str]
) -> Iterator[tuple[str, str, str]]:
    """(role, rest, value) of each `role=rest` naming a role the flag sets; else a problem."""
    for value in values:
        parts = _split(value, flag, shape, problems)
        problem = None if parts is None else _role_problem(parts[0], profile, flag, value)
        if problem:
            problems.append(problem)
        elif parts is not None:
            yield (*parts, value)


def _raise_all(problems: list[str], flag: str) -> None:
    if problems:
        raise UsageError("; ".join(problems), field=flag)


def parse_role_counts(values: Sequence[str], profile: Profile) -> dict[str, int]:
    """`--role-count role=N` values → role -> count, in the order given.

    Raises:
        UsageError: naming every malformed value, unknown or dynamic role, role given
            twice, or count outside the role's range at once.
    """
    counts: dict[str, int] = {}
    problems: list[str] = []
    for role, raw, value in _static_roles(values, profile, "--role-count", "'role=N'", problems):
        if not raw.isdigit():
            problems.append(f"--role-count {value!r}: count must be a whole number, got {raw!r}")
        elif role in counts:
            problems.append(f"--role-count {value!r}: role {role!r} is given twice")
        else:
            count = int(raw)
            requirement = profile.role(role)
            low, high = (1, 1) if requirement is None else (requirement.min, requirement.max)
            if not low <= count <= high:
                problems.append(
                    f"--role-count {value!r}: {role} count must be between {low} and {high}"
                )
            counts[role] = count
    _raise_all(problems, "--role-count")
    return counts


def parse_role_models(
    values: Sequence[str], profile: Profile, pool: ModelPool
) -> dict[str, list[str]]:
    """`--role-model role=model` values → role -> model refs in ordinal order.

    A role given again is its next instance; aliases become refs (case-insensitive).

    Raises:
        UsageError: naming every malformed value, unknown or dynamic role and unknown
            model at once.
    """
    models: dict[str, list[str]] = {}
    problems: list[str] = []
    shape = "'role=provider/model'"
    for role, raw, value in _static_roles(values, profile, "--role-model", shape, problems):
        try:
            models.setdefault(role, []).append(pool.lookup(raw).ref)
        except UsageError as exc:
            problems.append(f"--role-model {value!r}: {exc.message}")
    _raise_all(problems, "--role-model")
    return models


# --------------------------------------------------------------------------- requests

_RUN_FLAGS: tuple[tuple[str, str, bool, str, str], ...] = (
    # (flag, dest, repeated, metavar, help)
    ("--project-root", "project_root", False, "DIR", "the project directory"),
    ("--task-group", "task_group", False, "GROUP", "the task's group (slug)"),
    ("--task-id", "task_id", False, "ID", "the task's id within its group (slug)"),
    ("--task-type", "task_type", False, "TYPE", "the phase, e.g. implementation-planning"),
    ("--brief", "brief", False, "FILE", "the brief, relative to the project"),
    ("--approved-plan", "approved_plan", False, "FILE",
     "the approved plan (implementation and final-verification)"),
    ("--directive", "directive", False, "TEXT", "text for the lead"),
    ("--related-tasks", "related_tasks", False, "KEYS",
     "comma-separated task keys (group/id) the lead should read"),
    ("--host", "host", False, "ID",
     "host runtime: claude-code, codex or terminal (default: detected)"),
    ("--entry-mode", "entry_mode", False, "MODE", "spawn-process (default) or current-session"),
    ("--role-count", "role_counts", True, "ROLE=N",
     "instances of an adjustable or optional role (repeatable)"),
    ("--role-model", "role_models", True, "ROLE=MODEL",
     "the model of a role's next instance, e.g. analyser=claude/opus-4.6 (repeatable)"),
    ("--host-session-context-json", "host_session_context_json", False, "JSON",
     "a JSON object describing the host session (decides host, entry mode and model)"),
    ("--base-ref", "base_ref", False, "REF",
     "the base the writers branch from: a branch, tag or commit, or run:<run-id> (an earlier "
     "run's merged result); default: the commit the project is on"),
    ("--lead-access", "lead_access", False, "ACCESS",
     "what the lead's CLI may do without asking: ask (default: its own prompts), edits (edit "
     "files), full (edit and run commands)"),
    ("--provenance", "provenance", True, "KEY=SOURCE",
     "where a value came from, e.g. role-model:analyser:1=default:bundled (repeatable)"),
)  # fmt: skip
REQUEST_DESTS = tuple(flag[1] for flag in _RUN_FLAGS)


def add_request_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the renderArgv flags to `parser` (the CLI's `prepare` and `request_from_argv`)."""
    for flag, dest, repeated, metavar, text in _RUN_FLAGS:
        if repeated:
            parser.add_argument(
                flag, dest=dest, action="append", default=[], metavar=metavar, help=text
            )
        else:
            parser.add_argument(flag, dest=dest, default="", metavar=metavar, help=text)


def has_request_flags(ns: argparse.Namespace) -> bool:
    """True when any renderArgv flag was given (used to refuse mixing with --state)."""
    return any(getattr(ns, dest, None) for dest in REQUEST_DESTS)


def host_context(
    environment: Environment,
    pool: ModelPool | None,
    *,
    host: str = "",
    entry_mode: str = "",
    context_json: str = "",
) -> HostSessionContext:
    """The host session context of a command: the given context, then the flags (a flag
    contradicting the context is refused); `OKSTRA_HOST_MODEL` / `OKSTRA_HOST_EFFORT` fill
    the model and effort it does not report.

    Raises:
        UsageError: malformed context JSON, an unknown entry mode, a contradiction.
    """
    field = "--host-session-context-json"
    raw: dict[str, Any] = {}
    if context_json.strip():
        try:
            value = orjson.loads(context_json)
        except orjson.JSONDecodeError as exc:
            raise UsageError(f"invalid JSON ({exc}): expected a JSON object", field=field) from None
        if not isinstance(value, dict):
            raise UsageError(f"expected a JSON object, got {type(value).__name__}", field=field)
        # Keys that name no field are ignored, inside `currentModel` too.
        raw = given_context(value)
    if entry_mode and entry_mode not in ENTRY_MODES:
        raise UsageError(
            f"unknown entry mode {entry_mode!r}: expected one of {', '.join(ENTRY_MODES)}",
            field="--entry-mode",
        )
    for flag, key, given in (("--host", "hostId", host), ("--entry-mode", "entryMode", entry_mode)):
        said = raw.get(key)
        if given and said is not None and said != given:
            raise UsageError(
                f"{flag} {given!r} contradicts the host session context, which says "
                f"{key} {said!r}: drop {flag} or give the context that matches",
                field=flag,
            )
        if given and said is None:
            raw[key] = given
    try:
        if context_json.strip():
            # From outside: the types too (pydantic, at the edge).
            context = validate(HostSessionContext, raw)
        else:
            mode = cast("EntryMode", entry_mode or SPAWN_PROCESS)  # one of ENTRY_MODES
            context = HostSessionContext(host_id=host or None, entry_mode=mode)
    except RecordError as exc:
        # The context is one flag: name it, and the place inside the JSON.
        where, message = exc.first()
        raise UsageError(f"{where}: {message}" if where else message, field=field) from None
    model = context.current_model
    ref = model.model_ref
    ref = canonical_model(ref, pool) if ref else reported_host_model(environment, pool)
    effort = model.effort or reported_host_effort(environment)
    if (ref, effort) != (model.model_ref, model.effort):
        context = dataclasses.replace(
            context, current_model=dataclasses.replace(model, model_ref=ref, effort=effort)
        )
    return context


def context_of(
    ns: argparse.Namespace, environment: Environment, pool: ModelPool | None = None
) -> HostSessionContext:
    """`host_context` of a command's `--host`, `--entry-mode` and host session context."""
    return host_context(
        environment,
        pool,
        host=getattr(ns, "host", None) or "",
        entry_mode=getattr(ns, "entry_mode", None) or "",
        context_json=getattr(ns, "host_session_context_json", None) or "",
    )


def _pairs(values: Sequence[str], flag: str) -> dict[str, str]:
    out: dict[str, str] = {}
    problems: list[str] = []
    for value in values:
        parts = _split(value, flag, "'key=value'", problems)
        if parts is not None:
            out[parts[0]] = parts[1]
    _raise_all(problems, flag)
    return out


def request_from_namespace(
    ns: argparse.Namespace, environment: Environment, *, cwd: Path | None = None
) -> RunRequest:
    """The run request of parsed renderArgv flags, every check made once.

    Raises:
        UsageError: naming the flag and what was expected.
    """
    values: dict[str, Any] = {d: getattr(ns, d, None) for d in REQUEST_DESTS}
    missing = [
        "--" + name.replace("_", "-")
        for name in ("task_group", "task_id", "task_type", "brief")
        if not values.get(name)
    ]
    if missing:
        raise UsageError("okstra prepare: missing required flag(s): " + ", ".join(missing))
    task_type = str(values["task_type"])
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", task_type):
        raise UsageError(
            f"invalid task type {task_type!r}: expected a lower-case slug such as "
            f"{TASK_TYPES[0]!r}",
            field="--task-type",
        )
    base = cwd or Path.cwd()
    given = values.get("project_root")
    # No --project-root: the nearest `.okstra`, else the git top level, else here.
    root = Path(str(given)).expanduser() if given else default_project_root(base, environment.env)
    if not root.is_absolute():
        root = base / root
    catalog = load_catalog(environment)
    profile = catalog.profile(task_type)
    pool = ModelPool.from_catalog(catalog, environment)
    context = context_of(ns, environment, pool)
    related = [t.strip() for t in str(values.get("related_tasks") or "").split(",") if t.strip()]
    try:
        return RunRequest(
            project_root=root.resolve(),
            task_group=str(values["task_group"]),
            task_id=str(values["task_id"]),
            task_type=task_type,
            brief=str(values["brief"]),
            approved_plan=str(values.get("approved_plan") or ""),
            directive=str(values.get("directive") or ""),
            related_tasks=tuple(related),
            host=context,
            role_counts=parse_role_counts(values.get("role_counts") or (), profile),
            role_models=parse_role_models(values.get("role_models") or (), profile, pool),
            base_ref=str(values.get("base_ref") or ""),
            lead_access=values.get("lead_access") or None,
            provenance=_pairs(values.get("provenance") or (), "--provenance"),
        )
    except RecordError as exc:
        raise usage_error(exc, prefix="okstra prepare: ") from None


def request_from_argv(
    argv: Sequence[str], environment: Environment, *, cwd: Path | None = None
) -> RunRequest:
    """Parse a renderArgv list (`RunRequest.render_argv()`) back into the request."""
    import argparse  # only to parse an argv: the wizard, which imports this module, never does

    class _RaisingParser(argparse.ArgumentParser):
        def error(self, message: str) -> NoReturn:
            raise UsageError(f"okstra prepare: {message}")

    parser = _RaisingParser(prog="okstra prepare", add_help=False)
    add_request_arguments(parser)
    ns = parser.parse_args(list(argv))
    return request_from_namespace(ns, environment, cwd=cwd)
