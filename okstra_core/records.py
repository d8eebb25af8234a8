"""Plain records inside, pydantic at the edge.

Records are stdlib dataclasses; `validate` checks outside data with pydantic (built on
first use), `to_data` is the one serializer. `dataclass` shares `__repr__`, `__eq__`,
`__hash__` and frozen setters across classes: 3.11 compiles them per class otherwise.
"""

from __future__ import annotations

import dataclasses
import reprlib
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import field as field
from datetime import datetime
from operator import attrgetter
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, overload

_T = TypeVar("_T")


class Delegate(Generic[_T]):
    """A read-only attribute that is a dotted attribute path of the instance (a view)."""

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


# Given to okstra_core modules from pydantic when a validator is first built.
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
    """Data that does not fit a record: pydantic's error list, in one spelling."""

    def __init__(self, record: type[Any], errors: list[dict[str, Any]]) -> None:
        super().__init__(f"{len(errors)} validation error(s) for {record.__name__}")
        self.record = record
        self._errors = errors

    def errors(self) -> list[dict[str, Any]]:
        return self._errors

    def first(self) -> tuple[str, str]:
        """(place, message) of the first problem, without pydantic's "Value error, "."""
        problem = self._errors[0]
        message = str(problem["msg"]).removeprefix("Value error, ")
        return place(tuple(problem["loc"])), message


# -- the decorator -------------------------------------------------------------------

# Class attributes: tuple getters of the fields `__eq__` compares and `__hash__` hashes.
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
    # A field is assigned once, by `__init__` (`slots` records never get here).
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
    """Freeze a class made without `frozen` as `frozen=True` would, with shared methods."""
    for name in ("__setattr__", "__delattr__"):
        if name in cls.__dict__:
            raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}")
    cls.__setattr__ = _frozen_setattr  # type: ignore[assignment]
    cls.__delattr__ = _frozen_delattr  # type: ignore[assignment]
    setattr(cls, _FROZEN, True)


def _share_methods(
    cls: type[Any], *, repr: bool, eq: bool, frozen: bool, unsafe_hash: bool
) -> None:
    """Give a class the shared `__repr__`, `__eq__`, `__hash__` by the decorator's rules."""
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
        """`dataclasses.dataclass` with shared methods (see the module docstring)."""

        def wrap(cls):
            has_bases, frozen_base, standard_base = _frozen_bases(cls)
            if options.get("slots") or standard_base:
                # Slots replace the class; a standard-frozen base needs a standard child.
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


def fields_of(source: object, names: str) -> dict[str, Any]:
    """`source`'s attributes of the space-separated `names`: the fields a record copies."""
    return {name: getattr(source, name) for name in names.split()}


def place(loc: tuple[str | int, ...]) -> str:
    """A location as messages name it: `roleModels.analyser`, `answered[2].step`."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part != "[key]":
            out += f".{part}" if out else str(part)
    return out


def camel(name: str) -> str:
    """`snake_case` -> `camelCase`, as files spell keys."""
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
    """A record's `__pydantic_config__`: how it is read and how `to_data` writes it.

    `aliases`/`camel_case`: names in files; `omit_none`/`omit_empty`: left out while
    None/empty; `skip`: not written; `views`: computed values written after the fields;
    `first`: written first; `spread`: a field whose keys are written as the record's own.
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
    """How `to_data` writes a record."""

    omit_none: bool | frozenset[str] = frozenset()
    omit_empty: frozenset[str] = frozenset()
    skip: frozenset[str] = frozenset()
    views: tuple[str, ...] = ()
    first: tuple[str, ...] = ()
    spread: str | None = None


_ALIASES: dict[type[Any], Mapping[str, str]] = {}


def aliases_of(cls: type[Any]) -> Mapping[str, str]:
    """Python field name -> name in files, for every field a record class renames."""
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
    """A `RecordError` of one broken `__post_init__` rule; survives pydantic's wrapping."""
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

    # pydantic reads each annotation in its own module: every okstra_core module.
    for module_name, module in list(sys.modules.items()):
        if module is not None and module_name.split(".")[0] == "okstra_core":
            names = vars(module)
            for name in PYDANTIC_NAMES:
                names.setdefault(name, getattr(pydantic, name))
    built = pydantic.TypeAdapter(cls)
    _ADAPTERS[cls] = built
    return built


def validate(cls: type[_T], data: Any) -> _T:
    """`data` checked against the record `cls` and built into it (`RecordError` if not)."""
    from pydantic_core import ValidationError

    try:
        value: _T = adapter(cls).validate_python(data)
    except ValidationError as exc:
        raise RecordError(cls, [_spelled(e) for e in exc.errors()]) from None
    return value


def _spelled(error: Any) -> dict[str, Any]:
    raised = (error.get("ctx") or {}).get("error")
    if isinstance(raised, RecordError) and raised.errors():
        # A `__post_init__` rule: its own place, under the place of its record.
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

# A plan entry per key written: (Python name, name in data, 0 or a sum of these flags).
_VIEW, _OMIT_NONE, _OMIT_EMPTY, _SPREAD = 1, 2, 4, 8
_Key = tuple[str, str, int]
_PLANS: dict[type[Any], tuple[_Key, ...]] = {}


def _plan(cls: type[Any]) -> tuple[_Key, ...]:
    """What `to_data` writes for a record class (built once)."""
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
    """A record (and what it holds) as JSON-ready data, as its `config` declares it."""
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
    """A dataclass instance (a type that is none is remembered)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return True
    if cls is not type and not dataclasses.is_dataclass(cls):
        _NOT_RECORDS.add(cls)
    return False


def _other(value: Any, cls: type[Any]) -> Any:
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
    if isinstance(value, datetime):
        return value.isoformat()
    return value
