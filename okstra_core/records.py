"""Plain records inside, pydantic at the edge.

okstra's values — the catalog's profiles and providers, the wizard's state, its prompts
— are standard-library dataclasses. A headless command that reads only data okstra
already checked (a catalog or a state file whose digest matches what an earlier
process validated, kept as derived data: see `okstra_core.derived`)
never imports pydantic: building pydantic's model classes costs more than the rest of
a `wizard step`.

Data from outside (a file someone may have edited, an answer, a context) is checked by
`validate`, which builds a pydantic validator for the dataclass on first use. There is
one set of rules: the dataclass's annotations. Field constraints are written in them as
pydantic spells them (`Annotated[StrictStr, Field(min_length=1)]`); the names are
imported only for type checkers, and `validate` provides them from pydantic when it
first builds a validator (`PYDANTIC_NAMES`). Class-wide settings go in
`__pydantic_config__` (made by `config`): unknown keys are refused, and a field's
name in files may differ from its Python name (`aliases`). Rules across fields live in
`__post_init__` (a `ValueError` there is reported like any other rule).

`to_data` turns a record back into JSON-ready data, with the same aliases.

`dataclass` and `field` are the standard library's, named here so that a record's
module imports what it needs from one place.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any, Literal, TypeVar

_T = TypeVar("_T")

__all__ = [
    "PYDANTIC_NAMES",
    "RecordError",
    "adapter",
    "aliases_of",
    "camel",
    "config",
    "dataclass",
    "field",
    "json_schema",
    "place",
    "problem",
    "to_data",
    "validate",
]


# Names the records' annotations may use; given to their modules from pydantic when a
# validator is first built (the modules import them only while type checking).
PYDANTIC_NAMES: tuple[str, ...] = (
    "AfterValidator",
    "Field",
    "StrictBool",
    "StrictFloat",
    "StrictInt",
    "StrictStr",
)

_ADAPTERS: dict[type[Any], Any] = {}


class RecordError(ValueError):
    """Data that does not fit a record: pydantic's error list, in one spelling.

    `errors()` is pydantic's (each a dict with `type`, `loc`, `msg`, `input`, …), with
    the dataclass spelling of an unknown key (`unexpected_keyword_argument`) given the
    model spelling (`extra_forbidden`), so messages read the same for every record.
    """

    def __init__(self, record: type[Any], errors: list[dict[str, Any]]) -> None:
        super().__init__(f"{len(errors)} validation error(s) for {record.__name__}")
        self.record = record
        self._errors = errors

    def errors(self) -> list[dict[str, Any]]:
        return self._errors

    def error_count(self) -> int:
        return len(self._errors)

    def first(self) -> tuple[str, str]:
        """(place, message) of the first problem: `place(loc)`, and the message without
        pydantic's "Value error, " before a rule's own words."""
        problem = self._errors[0]
        message = str(problem["msg"]).removeprefix("Value error, ")
        return place(tuple(problem["loc"])), message


def place(loc: tuple[str | int, ...]) -> str:
    """A problem's location as messages name it: `roleModels.analyser`, `answered[2].step`
    (pydantic's `[key]` marker of a bad mapping key is left out: the key is named)."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part != "[key]":
            out += f".{part}" if out else str(part)
    return out


def camel(name: str) -> str:
    """`snake_case` -> `camelCase` (`task_group` -> `taskGroup`), as files spell keys."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def config(
    *,
    aliases: Mapping[str, str] | None = None,
    camel_case: bool = False,
    extra: Literal["forbid", "ignore"] = "forbid",
    by_name: bool = False,
    json_schema_extra: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """A record's `__pydantic_config__` (a plain dict: pydantic's `ConfigDict` keys).

    Args:
        aliases: Python field name -> the name in files (and in `to_data`).
        camel_case: every other field's name in files is its camelCase (`camel`).
        extra: what to do with unknown keys.
        by_name: also accept a field under its Python name when it has an alias.
        json_schema_extra: a function that edits the record's JSON Schema.
    """
    names = dict(aliases or {})
    out: dict[str, Any] = {"extra": extra}
    if names or camel_case:
        fallback = camel if camel_case else str
        out["alias_generator"] = lambda name: names.get(name) or fallback(name)
        out["okstra_aliases"] = names
        out["okstra_camel"] = camel_case
        if by_name:
            out["validate_by_name"] = True
            out["validate_by_alias"] = True
    if json_schema_extra is not None:
        out["json_schema_extra"] = json_schema_extra
    return out


_ALIASES: dict[type[Any], Mapping[str, str]] = {}


def aliases_of(cls: type[Any]) -> Mapping[str, str]:
    """Python field name -> name in files, for a record class (every field it renames)."""
    found = _ALIASES.get(cls)
    if found is not None:
        return found
    cfg = getattr(cls, "__pydantic_config__", None)
    names: dict[str, str] = {}
    if isinstance(cfg, dict):
        given = cfg.get("okstra_aliases")
        if isinstance(given, dict):
            names.update(given)
        if cfg.get("okstra_camel") and dataclasses.is_dataclass(cls):
            for f in dataclasses.fields(cls):
                names.setdefault(f.name, camel(f.name))
    _ALIASES[cls] = names
    return names


def problem(
    record: type[Any], loc: tuple[str | int, ...], message: str, value: Any = None
) -> RecordError:
    """A `RecordError` of one rule a record's `__post_init__` found broken.

    Raised the same way whether the record was built in Python or by `validate`: the
    field's place (`loc`) and message survive pydantic's wrapping of `__post_init__`.
    """
    if loc and isinstance(loc[0], str):  # the field's name in files, as pydantic's `loc`
        loc = (aliases_of(record).get(loc[0], loc[0]), *loc[1:])
    return RecordError(
        record, [{"type": "value_error", "loc": loc, "msg": message, "input": value}]
    )


def adapter(cls: type[Any]) -> Any:
    """The pydantic `TypeAdapter` of a record class (built once per process)."""
    found = _ADAPTERS.get(cls)
    if found is not None:
        return found
    import pydantic  # the edge: only data from outside pays for pydantic

    # Every loaded okstra_core module gets the names (a record's nested records may live
    # in other modules; pydantic reads each annotation in its own module).
    for module_name, module in list(sys.modules.items()):
        if module is not None and module_name.split(".")[0] == "okstra_core":
            names = vars(module)
            for name in PYDANTIC_NAMES:
                names.setdefault(name, getattr(pydantic, name))
    built = pydantic.TypeAdapter(cls)
    _ADAPTERS[cls] = built
    return built


def validate(cls: type[_T], data: Any) -> _T:
    """`data` checked against the record `cls` and built into it.

    Raises:
        RecordError: the data does not fit (pydantic's errors, see `RecordError`).
    """
    from pydantic_core import ValidationError

    try:
        value: _T = adapter(cls).validate_python(data)
    except ValidationError as exc:
        raise RecordError(cls, [_spelled(e) for e in exc.errors()]) from None
    return value


def _spelled(error: Any) -> dict[str, Any]:
    raised = (error.get("ctx") or {}).get("error")
    if isinstance(raised, RecordError) and raised.errors():
        # A rule of `__post_init__` (see `problem`): its own place and message, under
        # the place of the record that broke it.
        inner = dict(raised.errors()[0])
        inner["loc"] = (*tuple(error.get("loc") or ()), *tuple(inner.get("loc") or ()))
        return inner
    out = dict(error)
    if out.get("type") == "unexpected_keyword_argument":
        out["type"] = "extra_forbidden"
        out["msg"] = "Extra inputs are not permitted"
    elif out.get("type") == "dataclass_type":
        out["type"] = "model_type"
        name = (out.get("ctx") or {}).get("class_name")
        if name:
            out["msg"] = f"Input should be a valid dictionary or instance of {name}"
    return out


def json_schema(cls: type[Any], *, mode: Literal["validation", "serialization"]) -> dict[str, Any]:
    """The JSON Schema of a record (its aliases as property names)."""
    schema: dict[str, Any] = adapter(cls).json_schema(mode=mode, by_alias=True)
    return schema


def to_data(value: Any, *, drop_none: bool = False) -> Any:
    """A record (and what it holds) as JSON-ready data: dicts with the files' names.

    Tuples become lists, paths strings; a `drop_none` record omits fields whose value
    is None.
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = aliases_of(type(value))
        out: dict[str, Any] = {}
        for f in dataclasses.fields(value):
            item = getattr(value, f.name)
            if drop_none and item is None:
                continue
            out[names.get(f.name, f.name)] = to_data(item, drop_none=drop_none)
        return out
    if isinstance(value, dict):
        return {k: to_data(v, drop_none=drop_none) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_data(v, drop_none=drop_none) for v in value]
    if isinstance(value, PurePath):
        return str(value)
    return value
