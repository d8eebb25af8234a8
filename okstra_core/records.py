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

`to_data` turns a record back into JSON-ready data: the one serializer of every
document and protocol reply. What it writes is declared once per record, in `config`:
the names in files (`aliases`, `camel_case`), the fields left out while None or empty,
the values it holds for Python only (`skip`), and the values computed from the fields
(`views`).

`field` is the standard library's; `dataclass` is the standard library's with the
same options and the same behaviour, except that `__repr__`, `__eq__` and `__hash__`,
and a frozen record's `__setattr__` and `__delattr__`, are one shared function each
instead of code generated per class. On Python 3.11 and 3.12 the standard decorator
compiles each generated method when the class is created: for the sixty records a
`wizard step` loads that was a third of the whole command, and `frozen=True` alone
(two more methods) cost four times what the rest of the decorator does. A frozen
record is made by the decorator without `frozen`; its shared `__setattr__` lets the
generated `__init__` assign each field once and refuses any later assignment (and, on
the record's own class, any other attribute), as the standard frozen methods do. It
costs a frozen record's creation about a tenth of a microsecond per field. Records with
`slots`, or based on a class frozen by the standard decorator, keep its own methods.
They are named here so that a record's module imports what it needs from one place.
"""

from __future__ import annotations

import dataclasses
import reprlib
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import field
from datetime import datetime
from operator import attrgetter
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, overload

_T = TypeVar("_T")

__all__ = [
    "PYDANTIC_NAMES",
    "Delegate",
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


class Delegate(Generic[_T]):
    """A read-only attribute that is an attribute of another (`path`, dotted), as a
    property returning it would be: `ref = Delegate[str]("execution.role_execution_ref")`.
    Not a field of a record; written by `to_data` only as one of its `views`."""

    def __init__(self, path: str) -> None:
        self._read = attrgetter(path)

    @overload
    def __get__(self, instance: None, owner: type[Any]) -> Delegate[_T]: ...
    @overload
    def __get__(self, instance: object, owner: type[Any]) -> _T: ...
    def __get__(self, instance: object, owner: type[Any]) -> Delegate[_T] | _T:
        if instance is None:
            return self
        value: _T = self._read(instance)
        return value


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

    def first(self) -> tuple[str, str]:
        """(place, message) of the first problem: `place(loc)`, and the message without
        pydantic's "Value error, " before a rule's own words."""
        problem = self._errors[0]
        message = str(problem["msg"]).removeprefix("Value error, ")
        return place(tuple(problem["loc"])), message


# -- the decorator -------------------------------------------------------------------

# Class attributes holding a record's keys: `attrgetter`s (always returning a tuple) of
# the fields `__eq__` compares and `__hash__` hashes.
_EQ_KEY = "__okstra_eq_key__"
_HASH_KEY = "__okstra_hash_key__"
# Set (to True) in the own namespace of a record class made with `frozen=True`.
_FROZEN = "__okstra_frozen__"


def _getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    if len(names) == 1:  # `attrgetter` of one name returns the value, not a 1-tuple
        one = attrgetter(names[0])
        return lambda value: (one(value),)
    if not names:
        return lambda value: ()
    many: Callable[[Any], tuple[Any, ...]] = attrgetter(*names)
    return many


@reprlib.recursive_repr()
def _repr(self: Any) -> str:
    shown = ", ".join(
        f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self) if f.repr
    )
    return f"{type(self).__qualname__}({shown})"


def _eq(self: Any, other: object) -> object:
    if other.__class__ is self.__class__:
        key = getattr(self.__class__, _EQ_KEY)
        return bool(key(self) == key(other))
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(getattr(self.__class__, _HASH_KEY)(self))


def _frozen_setattr(self: Any, name: str, value: object) -> None:
    # A field can be assigned once: the generated `__init__` does that. (Records made
    # with `slots` take the standard decorator's methods, so `__dict__` is there.)
    values = self.__dict__
    cls = type(self)
    if name in cls.__dataclass_fields__:
        if name in values:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
    elif _FROZEN in cls.__dict__:  # on a record's own class, no other attribute either
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
    values[name] = value


def _frozen_delattr(self: Any, name: str) -> None:
    cls = type(self)
    if name in cls.__dataclass_fields__ or _FROZEN in cls.__dict__:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
    object.__delattr__(self, name)


def _frozen_bases(cls: type[Any]) -> tuple[bool, bool, bool]:
    """(has dataclass bases, any of them frozen, any frozen by the standard decorator)."""
    has = frozen = standard = False
    for base in cls.__mro__[-1:0:-1]:
        if "__dataclass_fields__" not in base.__dict__:
            continue
        has = True
        by_standard = bool(base.__dataclass_params__.frozen)  # type: ignore[attr-defined]
        standard = standard or by_standard
        frozen = frozen or by_standard or bool(base.__dict__.get(_FROZEN))
    return has, frozen, standard


def _freeze(cls: type[Any]) -> None:
    """Make a class the standard decorator made with `frozen=False` frozen the way
    `frozen=True` would, with one shared `__setattr__` and `__delattr__`: a field can be
    assigned once (its `__init__` does that) and never deleted; on the class itself no
    other attribute can be set either."""
    for name in ("__setattr__", "__delattr__"):
        if name in cls.__dict__:
            raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}")
    cls.__setattr__ = _frozen_setattr  # type: ignore[assignment]
    cls.__delattr__ = _frozen_delattr  # type: ignore[assignment]
    setattr(cls, _FROZEN, True)


def _share_methods(
    cls: type[Any], *, repr: bool, eq: bool, frozen: bool, unsafe_hash: bool
) -> None:
    """Give a class the standard decorator made with `repr=False, eq=False` the
    `__repr__`, `__eq__` and `__hash__` the decorator would have made, by its rules: a
    method the class defines itself is kept; `eq` with `frozen`, or `unsafe_hash`,
    hashes the compared fields; `eq` alone makes the class unhashable."""
    own = cls.__dict__
    # Python sets `__hash__ = None` for a class that defines `__eq__`: not its own.
    explicit_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
    if unsafe_hash and explicit_hash:
        raise TypeError(f"Cannot overwrite attribute __hash__ in class {cls.__name__}")
    if repr and "__repr__" not in own:
        cls.__repr__ = _repr  # type: ignore[assignment]
    fields = dataclasses.fields(cls)
    if eq:
        setattr(cls, _EQ_KEY, _getter(tuple(f.name for f in fields if f.compare)))
        if "__eq__" not in own:
            cls.__eq__ = _eq  # type: ignore[assignment]
    if unsafe_hash or (eq and frozen and not explicit_hash):
        hashed = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))
        setattr(cls, _HASH_KEY, _getter(hashed))
        cls.__hash__ = _hash  # type: ignore[assignment]
    elif eq and not explicit_hash:
        cls.__hash__ = None  # type: ignore[assignment]


if TYPE_CHECKING:
    from dataclasses import dataclass as dataclass
else:

    def dataclass(cls=None, /, *, repr=True, eq=True, unsafe_hash=False, frozen=False, **options):
        """`dataclasses.dataclass` with shared `__repr__`, `__eq__` and `__hash__`, and
        for `frozen`, a shared `__setattr__` and `__delattr__`."""

        def wrap(cls):
            has_bases, frozen_base, standard_base = _frozen_bases(cls)
            if options.get("slots") or standard_base:
                # The standard decorator's own frozen methods: slots replace the class
                # (and pickle it through its own state methods), and a base frozen by
                # the standard decorator must see a child frozen by it.
                made = dataclasses.dataclass(cls, repr=False, eq=False, frozen=frozen, **options)
            else:
                if has_bases and frozen_base != frozen:
                    made_of = "frozen" if frozen else "non-frozen"
                    other = "non-frozen" if frozen else "frozen"
                    raise TypeError(f"cannot inherit {made_of} dataclass from a {other} one")
                made = dataclasses.dataclass(cls, repr=False, eq=False, **options)
                if frozen:
                    _freeze(made)
            _share_methods(made, repr=repr, eq=eq, frozen=frozen, unsafe_hash=unsafe_hash)
            return made

        return wrap if cls is None else wrap(cls)


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
    json_schema_extra: Callable[..., None] | None = None,
    omit_none: bool | Iterable[str] = (),
    omit_empty: Iterable[str] = (),
    skip: Iterable[str] = (),
    views: Iterable[str] = (),
    first: Iterable[str] = (),
    spread: str | None = None,
) -> dict[str, Any]:
    """A record's `__pydantic_config__`: how it is read (pydantic's `ConfigDict` keys)
    and how `to_data` writes it (okstra's keys), declared once for both.

    Args:
        aliases: Python name -> the name in files and protocol data (fields and views).
        camel_case: every other name in files is its camelCase (`camel`).
        extra: what to do with unknown keys.
        by_name: also accept a field under its Python name when it has an alias.
        json_schema_extra: a function that edits the record's JSON Schema (given the
            schema, and the record class when it takes a second argument).
        omit_none: the fields (and views) left out while they are None; True for all.
        omit_empty: the fields (and views) left out while they are empty (`""`, `()`, `{}`).
        skip: fields `to_data` does not write (values the record holds for Python only).
        views: properties (or methods taking no argument) written after the fields,
            each a value computed from them (`PlannedFile.sha256`).
        first: names (fields or views) written before the others, in this order.
        spread: a field whose keys are written in its place, as the record's own (a
            mapping, or a record): the keys okstra keeps, unread, in a shared file.
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
    out["okstra_data"] = _DataForm(
        omit_none=omit_none if isinstance(omit_none, bool) else frozenset(omit_none),
        omit_empty=frozenset(omit_empty),
        skip=frozenset(skip),
        views=tuple(views),
        first=tuple(first),
        spread=spread,
    )
    return out


@dataclass(frozen=True)
class _DataForm:
    """How `to_data` writes a record (made by `config`, read by `_plan`)."""

    omit_none: bool | frozenset[str] = frozenset()
    omit_empty: frozenset[str] = frozenset()
    skip: frozenset[str] = frozenset()
    views: tuple[str, ...] = ()
    first: tuple[str, ...] = ()
    spread: str | None = None


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


# ---------------------------------------------------------------------------- to_data

# A record's plan, one entry per key in the order written: (Python name, name in data,
# how: 0 for a field written as it is, else the sum of these flags).
_VIEW, _OMIT_NONE, _OMIT_EMPTY, _SPREAD = 1, 2, 4, 8
_Key = tuple[str, str, int]
_PLANS: dict[type[Any], tuple[_Key, ...]] = {}


def _plan(cls: type[Any]) -> tuple[_Key, ...]:
    """What `to_data` writes for a record class, from its `config` (built once)."""
    found = _PLANS.get(cls)
    if found is not None:
        return found
    cfg = getattr(cls, "__pydantic_config__", None)
    form = cfg.get("okstra_data") if isinstance(cfg, dict) else None
    if not isinstance(form, _DataForm):
        form = _DataForm()
    names = aliases_of(cls)
    camel_views = isinstance(cfg, dict) and bool(cfg.get("okstra_camel"))
    fields = [f.name for f in dataclasses.fields(cls) if f.name not in form.skip]
    order = [*form.first, *(n for n in [*fields, *form.views] if n not in form.first)]
    keys: list[_Key] = []
    for name in order:
        key = names.get(name) or (camel(name) if camel_views else name)
        omit_none = form.omit_none is True or (
            not isinstance(form.omit_none, bool) and name in form.omit_none
        )
        how = (
            (_VIEW if name in form.views else 0)
            | (_OMIT_NONE if omit_none else 0)
            | (_OMIT_EMPTY if name in form.omit_empty else 0)
            | (_SPREAD if name == form.spread else 0)
        )
        keys.append((name, key, how))
    plan = tuple(keys)
    _PLANS[cls] = plan
    return plan


# Values written as they are (checked by exact type: the common case is fast).
_PLAIN = frozenset({str, int, float, bool, type(None)})


def to_data(value: Any) -> Any:
    """A record (and what it holds) as JSON-ready data, as its `config` declares it.

    The one serializer of okstra's documents and protocol replies: each field (then
    each view) under its name in files, those declared so left out while None or
    empty, the skipped ones not at all. Tuples become lists (a named tuple an object of
    its fields), paths strings, datetimes ISO 8601 text.
    """
    cls = type(value)
    if cls in _PLAIN:
        return value
    if cls is dict:
        return {k: v if type(v) in _PLAIN else to_data(v) for k, v in value.items()}
    plan = _PLANS.get(cls)
    if plan is None:
        if cls in _NOT_RECORDS or not _is_record(value, cls):
            return _other(value, cls)
        plan = _plan(cls)
    out: dict[str, Any] = {}
    for name, key, how in plan:
        item = getattr(value, name)
        if not how:  # the common case: a field written as it is
            out[key] = item if type(item) in _PLAIN else to_data(item)
            continue
        if how & _VIEW and callable(item):
            item = item()  # a view that is a method
        if item is None:
            if not how & (_OMIT_NONE | _SPREAD):
                out[key] = None
        elif how & _OMIT_EMPTY and type(item) in _SIZED and not item:
            continue
        elif how & _SPREAD:
            out.update(to_data(item))  # a spread field: its keys in its place
        else:
            out[key] = item if type(item) in _PLAIN else to_data(item)
    return out


_SIZED = frozenset({str, list, tuple, dict})
# Types seen that are no records (`to_data` writes them by `_other`).
_NOT_RECORDS: set[type[Any]] = set()


def _is_record(value: Any, cls: type[Any]) -> bool:
    """A dataclass instance (a type that is none is remembered: paths, datetimes)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return True
    if cls is not type and not dataclasses.is_dataclass(cls):
        _NOT_RECORDS.add(cls)
    return False


def _other(value: Any, cls: type[Any]) -> Any:
    """`to_data` of a value that is not a record."""
    if cls is list or cls is tuple:
        return [v if type(v) in _PLAIN else to_data(v) for v in value]
    if isinstance(value, PurePath):  # before the Mapping check: paths are common
        return str(value)
    if isinstance(value, Mapping):
        return {k: v if type(v) in _PLAIN else to_data(v) for k, v in value.items()}
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a named tuple
        return {name: to_data(item) for name, item in zip(value._fields, value, strict=True)}
    if isinstance(value, (list, tuple)):
        return [to_data(v) for v in value]
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, datetime):
        return value.isoformat()
    return value
