"""Checking the catalog's parsed data: one clear error per bad file.

A failed record check (`records.validate`) becomes ONE `DataFileError` naming the file,
the field path (`roles[1].max`) and what was expected (`validate_record`); TOML that does
not parse names its line (`parse_toml`). The JSON configs (`config.json`, a project's
`.okstra/project.json`) are checked key by key (`parse_global_config`, `model_defaults`);
a provider's launch templates by `check_launch` once its record is built.
"""

from __future__ import annotations

import re
import typing
from collections.abc import Iterable
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any, TypeVar

from .. import records
from ..errors import DataFileError
from ..records import place
from ..store import decode_utf8, json_kind
from .models import GlobalConfig, LaunchSpec, ModelDefaults, ProviderSpec
from .rules import (
    ENV_NAME,
    ID_PATTERN,
    DataProblem,
    check_discover_glob,
    check_mcp_launch,
    check_template,
    check_worker_launch,
    check_worker_resume,
    template_fields,
)
from .settings import DEFAULT_NOTIFY, NOTIFY_EVENTS, TeamSettings

_T = TypeVar("_T")


def decode(data: bytes, path: Path) -> str:
    # An editor's byte-order mark is not content.
    return decode_utf8(data, path, error=DataFileError).removeprefix("\ufeff")


_TOML_LINE = re.compile(r"at line (\d+)")


def parse_toml(text: str, path: Path, *, line_offset: int = 0) -> dict[str, Any]:
    # Imported here: a process that takes its catalog from the cache parses no TOML.
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        if line_offset:
            message = _TOML_LINE.sub(lambda m: f"at line {int(m.group(1)) + line_offset}", message)
        raise DataFileError(f"invalid TOML: {message}", path=path) from None
    except RecursionError:
        # tomllib recurses per nesting level; a hostile file must not crash okstra.
        raise DataFileError("invalid TOML: arrays or tables nested too deeply", path=path) from None


def validate_record(record: type[_T], raw: dict[str, Any], path: Path) -> _T:
    """Validate `raw` against `record`; the first error becomes one `DataFileError`."""
    try:
        return records.validate(record, raw)
    except records.RecordError as exc:
        errors = exc.errors()
        first = errors[0]
        where = place(tuple(first["loc"]))
        problem = (first.get("ctx") or {}).get("error")
        if isinstance(problem, DataProblem):
            # A rule of the record (its `__post_init__`): the field it names, inside `loc`.
            field = (
                f"{where}.{problem.field}" if where and problem.field else where or problem.field
            )
            raise DataFileError(problem.message, path=path, field=field or None) from None
        message = _explain(first, record)
        if len(errors) > 1:
            others = ", ".join(place(tuple(e["loc"])) or "(top level)" for e in errors[1:4])
            more = "" if len(errors) <= 4 else f" and {len(errors) - 4} more"
            message += f" (also wrong: {others}{more})"
        raise DataFileError(message, path=path, field=where or None) from None


# What a plain type error expected, by the validator's error type.
_EXPECTED = {
    **dict.fromkeys(("string_type", "string_sub_type"), "expected a string"),
    **dict.fromkeys(("bool_type", "bool_parsing"), "expected a boolean (true or false)"),
    **dict.fromkeys(("float_type", "float_parsing"), "expected a number"),
    **dict.fromkeys(("tuple_type", "list_type", "iterable_type"), "expected an array"),
    **dict.fromkeys(
        ("dict_type", "model_type", "model_attributes_type", "mapping_type"), "expected a table"
    ),
    "finite_number": "expected a finite number",
}


def _explain(error: Any, record: type[Any]) -> str:
    kind: str = error["type"]
    value = error.get("input")
    ctx = error.get("ctx") or {}
    got = f", got {describe(value)}"
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        allowed = _allowed_keys(record, error["loc"][:-1])
        hint = f": expected one of {', '.join(allowed)}" if allowed else ""
        return f"unknown key {error['loc'][-1]!r}{hint}"
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return (
            "expected an integer"
            + (" (booleans are not integers)" if isinstance(value, bool) else "")
            + got
        )
    if kind in _EXPECTED:
        return _EXPECTED[kind] + got
    if kind == "literal_error":
        return f"expected {ctx.get('expected', 'one of the allowed values')}" + got
    if kind == "greater_than_equal":
        return f"expected a number >= {ctx.get('ge')}" + got
    if kind == "greater_than":
        return f"expected a number > {ctx.get('gt')}" + got
    if kind in ("string_too_short", "too_short"):
        return "must not be empty"
    msg: str = error.get("msg", "invalid value")
    return msg[:1].lower() + msg[1:] + got


def _allowed_keys(record: type[Any], loc: Iterable[int | str]) -> list[str]:
    """The field names of the (nested) record at `loc`, for "unknown key" hints."""
    current: Any = record
    for item in loc:
        if isinstance(item, int):
            continue
        if not _is_record(current):
            return []
        annotation = _field_types(current).get(str(item))
        if annotation is None:
            return []
        current = _inner_record(annotation)
    if _is_record(current):
        hidden = {"source", "bundled", "body"}
        return [f.name for f in fields(current) if f.name not in hidden]
    return []


def _is_record(value: Any) -> bool:
    return isinstance(value, type) and is_dataclass(value)


def _field_types(record: type[Any]) -> dict[str, Any]:
    """A record's field types, resolved (only after it validated something, which
    gave its module the names its annotations use); empty if they do not resolve."""
    try:
        return typing.get_type_hints(record)
    except Exception:  # a hint is only a hint: never a reason to fail
        return {}


def _inner_record(annotation: Any) -> Any:
    """The record inside `tuple[X, ...]`, `X | None`, … (or None)."""
    if _is_record(annotation):
        return annotation
    for arg in typing.get_args(annotation):
        found = _inner_record(arg)
        if found is not None:
            return found
    return None


def describe(value: Any, *, json: bool = False) -> str:
    """How a value is named in an error: as JSON names it, or (TOML) an object a table."""
    kind = json_kind(value)
    return "a table" if kind == "an object" and not json else kind


def bad_value(expected: str, value: Any, path: Path, field: str) -> DataFileError:
    """`expected <expected>, got <value's JSON kind>` for `field` of a JSON file."""
    return DataFileError(
        f"expected {expected}, got {describe(value, json=True)}", path=path, field=field
    )


def _worktrees_dir(raw: dict[str, Any], path: Path) -> str | None:
    """`"worktrees": {"dir": "<absolute or ~ path>"}`, or None when not set."""
    value = raw.get("worktrees")
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) - {"dir"}:
        raise bad_value('{"dir": "<directory>"}', value, path, "worktrees")
    directory = value.get("dir")
    if directory is not None and (
        not isinstance(directory, str) or not directory.startswith(("/", "~"))
    ):
        raise bad_value("an absolute directory (or one under ~)", directory, path, "worktrees.dir")
    return directory


# The keys of config.json: its record's fields as files name them (`GlobalConfig`).
CONFIG_KEYS = records.aliases_of(GlobalConfig)
_GLOBAL_CONFIG_KEYS = tuple(
    CONFIG_KEYS.get(f.name, f.name) for f in fields(GlobalConfig) if f.name != "source"
)
# `team`'s keys: (JSON name, field, type, lowest, highest).
_TEAM_KEYS: tuple[tuple[str, str, type, int, int], ...] = (
    ("panesPerWindow", "panes_per_window", int, 1, 50),
    ("keepEndedPanes", "keep_ended_panes", bool, 0, 1),
    ("logLimitMib", "log_limit_mib", int, 1, 4096),
)


def _team_settings(value: Any, path: Path) -> TeamSettings:
    """`team`: `{"panesPerWindow": 6, "keepEndedPanes": false, "logLimitMib": 10}`."""
    if not isinstance(value, dict):
        raise bad_value("an object", value, path, "team")
    known = {key for key, *_ in _TEAM_KEYS}
    for key in value:
        if key not in known:
            raise DataFileError(
                f"unknown key {key!r}: expected one of {', '.join(sorted(known))}",
                path=path,
                field=f"team.{key}",
            )
    given: dict[str, Any] = {}
    for key, name, kind, low, high in (k for k in _TEAM_KEYS if k[0] in value):
        item = value[key]
        if kind is bool and not isinstance(item, bool):
            raise bad_value("true or false", item, path, f"team.{key}")
        whole = isinstance(item, int) and not isinstance(item, bool)
        if kind is int and not (whole and low <= item <= high):
            raise bad_value(f"a whole number in [{low}, {high}]", item, path, f"team.{key}")
        given[name] = item
    return TeamSettings(**given)


def _notify_events(value: Any, path: Path) -> tuple[str, ...]:
    """`notify`: the events a run's watcher tells (a subset of `NOTIFY_EVENTS`)."""
    if not isinstance(value, list) or any(v not in NOTIFY_EVENTS for v in value):
        raise bad_value(f"an array of {', '.join(NOTIFY_EVENTS)}", value, path, "notify")
    return tuple(dict.fromkeys(value))


def parse_global_config(raw: dict[str, Any], path: Path) -> GlobalConfig:
    """Validate the parsed object of `<config dir>/config.json`, or a change to it before
    it is written (`okstra_core.config`); a `DataFileError` names the key."""
    for key in raw:
        if key not in _GLOBAL_CONFIG_KEYS:
            raise DataFileError(
                f"unknown key {key!r}: expected one of {', '.join(_GLOBAL_CONFIG_KEYS)}",
                path=path,
                field=key,
            )
    disabled = raw.get(CONFIG_KEYS["disabled_providers"], [])
    if not isinstance(disabled, list):
        raise bad_value("an array of provider ids", disabled, path, "disabledProviders")
    for i, pid in enumerate(disabled):
        if not isinstance(pid, str) or not pid:
            raise bad_value("a provider id (string)", pid, path, f"disabledProviders[{i}]")
    for key in ("language", "theme"):
        value = raw.get(key)
        if value is not None and (not isinstance(value, str) or not value):
            raise bad_value("a non-empty string or null", value, path, key)
    mcp = raw.get("mcp", True)
    if not isinstance(mcp, bool):
        raise bad_value("true or false", mcp, path, "mcp")
    return GlobalConfig(
        model_defaults=model_defaults(raw.get(CONFIG_KEYS["model_defaults"], {}), path),
        disabled_providers=tuple(disabled),
        language=raw.get("language"),
        theme=raw.get("theme"),
        worktrees_dir=_worktrees_dir(raw, path),
        team=_team_settings(raw.get("team", {}), path),
        notify=_notify_events(raw["notify"], path) if "notify" in raw else DEFAULT_NOTIFY,
        mcp=mcp,
        source=str(path),
    )


def model_defaults(value: Any, path: Path, *, earlier: bool = False) -> ModelDefaults:
    """A `modelDefaults` block (a `DataFileError` names the file and field of a bad one).

    `earlier`: a file the earlier okstra read too (`.okstra/project.json`), read as it
    did: a non-object block is left out with a note, and a model without its provider
    (`"opus"`) is kept for `okstra_core.defaults` to match.
    """
    expected = "an object mapping a role to an array of model refs"
    if not isinstance(value, dict) and not earlier:
        raise bad_value(expected, value, path, "modelDefaults")
    if not isinstance(value, dict):
        note = (
            f"{path}: modelDefaults: expected {expected}, got {describe(value, json=True)}; ignored"
        )
        return ModelDefaults(source=str(path), notes=(note,))
    by_role: dict[str, tuple[str, ...]] = {}
    for role, refs in value.items():
        where = f"modelDefaults.{role}"
        if not ID_PATTERN.fullmatch(role):
            raise DataFileError(
                "expected a role id (lower-case letters, digits, '-', '_')",
                path=path,
                field=where,
            )
        if not isinstance(refs, list) or not refs:
            raise bad_value("a non-empty array of model refs ('provider/model')", refs, path, where)
        for i, ref in enumerate(refs):
            parts = ref.split("/") if isinstance(ref, str) else []
            bare = earlier and len(parts) == 1 and bool(parts[0].strip())
            if not bare and (len(parts) != 2 or not all(p.strip() for p in parts)):
                raise bad_value("a model ref 'provider/model'", ref, path, f"{where}[{i}]")
        by_role[role] = tuple(refs)
    return ModelDefaults(by_role=by_role, source=str(path))


def check_launch(spec: ProviderSpec) -> None:
    """The launch templates' rules (checked when a provider file is loaded)."""
    launch = spec.launch
    _check_launch_argvs(launch)
    _check_launch_env(launch)
    used_new = {f for element in launch.new for f in template_fields(element)}
    used_env = {f for value in launch.env.values() for f in template_fields(value)}
    if not ({"prompt", "prompt_file"} & (used_new | used_env)):
        raise DataProblem(
            "launch.new",
            "the lead prompt is never passed: expected {prompt} or {prompt_file} in "
            "launch.new or launch.env",
        )
    used_resume = {f for element in launch.resume for f in template_fields(element)}
    if "session_id" not in used_resume:
        raise DataProblem("launch.resume", "expected {session_id} (resume must name the session)")
    if launch.session_id == "discover":
        _check_discovered_session(launch, used_new)
    else:
        _check_minted_session(launch, used_new)
    check_mcp_launch(launch.mcp, launch.mcp_env)
    check_worker_launch(
        launch.worker,
        launch.access.read_only,
        launch.access.write,
        discovers_session=launch.session_id == "discover",
    )
    check_worker_resume(launch.worker, launch.worker_resume, launch.worker_session_pattern)
    for i, flag in enumerate(launch.required_flags):
        if not flag.startswith("-"):
            raise DataProblem(
                f"launch.required_flags[{i}]", f"expected a flag such as '--model', got {flag!r}"
            )


def _check_launch_argvs(launch: LaunchSpec) -> None:
    """version, new and resume are non-empty argvs (help may be empty) starting "{cli}"."""
    for name in ("version", "new", "resume", "help"):
        argv: tuple[str, ...] = getattr(launch, name)
        if not argv:
            if name == "help":
                continue
            raise DataProblem(f"launch.{name}", "expected a non-empty argv array")
        if argv[0] != "{cli}":
            raise DataProblem(
                f"launch.{name}[0]",
                'expected the first element to be "{cli}" (the provider\'s cli)',
            )
        for i, element in enumerate(argv):
            check_template(element, f"launch.{name}[{i}]")


def _check_launch_env(launch: LaunchSpec) -> None:
    """launch.env: variable names, template values."""
    for key, value in launch.env.items():
        if not ENV_NAME.fullmatch(key):
            raise DataProblem(
                f"launch.env.{key}", "expected an environment variable name (letters, digits, '_')"
            )
        check_template(value, f"launch.env.{key}")


def _check_discovered_session(launch: LaunchSpec, used_new: set[str]) -> None:
    """session_id = "discover": a [launch.discover] table, no {session_id} at launch."""
    if launch.discover is None:
        raise DataProblem(
            "launch.discover", 'expected a [launch.discover] table when session_id = "discover"'
        )
    if "session_id" in used_new:
        raise DataProblem(
            "launch.new",
            'the CLI mints the id when session_id = "discover": '
            "{session_id} cannot be passed to launch.new",
        )
    check_discover_glob(launch.discover.glob)
    try:
        pattern = re.compile(launch.discover.id_pattern)
    except re.error as exc:
        raise DataProblem(
            "launch.discover.id_pattern", f"invalid regular expression ({exc})"
        ) from None
    if pattern.groups < 1:
        raise DataProblem(
            "launch.discover.id_pattern",
            "expected a group capturing the session id, e.g. '-([0-9a-f-]+)\\.jsonl$'",
        )


def _check_minted_session(launch: LaunchSpec, used_new: set[str]) -> None:
    """An id okstra mints: no [launch.discover] table, {session_id} passed at launch."""
    if launch.discover is not None:
        raise DataProblem(
            "launch.discover",
            f'only used when session_id = "discover" (it is {launch.session_id!r})',
        )
    if "session_id" not in used_new:
        raise DataProblem(
            "launch.new",
            f"expected {{session_id}}: okstra mints a {launch.session_id} id and the "
            "CLI must be given it, or the resume sheet would name a session that "
            "does not exist",
        )
