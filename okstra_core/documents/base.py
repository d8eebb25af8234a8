"""The base of every document okstra writes: one record writes and reads it.

Writing needs no pydantic; `parse`/`read` validate (`records.validate`) and report a
`DataFileError` naming the file and field. Unknown keys are refused except in shared files
(`OpenDocument`); older layouts are upgraded first (`_upgrade`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Self

import orjson

from ..errors import DataFileError, OkstraError
from ..records import RecordError, aliases_of, config, dataclass, field, to_data, validate
from ..store import dumps_json, read_json

if TYPE_CHECKING:
    from pydantic import StrictStr


# The layout of `run-inputs.json`, `run-manifest.json` and `task-manifest.json`.
SCHEMA_VERSION: Literal["2.0"] = "2.0"
EXECUTION_IDENTITY_VERSION: Literal[2] = 2

# How a document holds documents of its own (`Document.NESTED`): one, a sequence of
# them, or a mapping whose values are documents.
Shape = Literal["one", "each", "values"]


def validation_error(exc: RecordError, path: Path | None, what: str) -> DataFileError:
    """The first problem of a validation error, naming the file and the field."""
    where, message = exc.first()
    return DataFileError(f"{message} ({what})", path=path, field=where or "(root)")


class Document:
    """A file okstra writes: frozen, camelCase, strict about unknown keys.

    Every concrete document is a `records.dataclass(frozen=True, kw_only=True)`; a field
    written only once it is known is named in its config's `omit_none`.
    """

    # camelCase in files, read by either name (a document's own config may say more).
    __pydantic_config__ = config(camel_case=True, by_name=True)
    WHAT: ClassVar[str] = "document"  # what the file is, for messages
    # Fields holding documents, and how (see `Shape`): for `OpenDocument` (keys kept
    # at every level) and `from_own`.
    NESTED: ClassVar[Mapping[str, tuple[Shape, type[Document]]]] = {}

    def dump(self) -> dict[str, Any]:
        """The JSON object written (camelCase keys; see `records.to_data`)."""
        data: dict[str, Any] = to_data(self)
        return data

    def to_bytes(self) -> bytes:
        """The exact bytes of the file (canonical JSON)."""
        return dumps_json(self.dump())

    def jsonl(self) -> bytes:
        """The exact bytes of one JSONL line of this record."""
        return orjson.dumps(self.dump(), option=orjson.OPT_SORT_KEYS) + b"\n"

    @classmethod
    def _upgrade(cls, data: Any) -> Any:
        """`data` in this version's layout (a document with older layouts overrides it)."""
        return data

    @classmethod
    def parse(cls, data: Any, *, path: Path | None = None) -> Self:
        """Validate a decoded JSON value; a `DataFileError` naming the field otherwise."""
        try:
            data = cls._upgrade(data)
            if issubclass(cls, OpenDocument):
                data = _split(cls, data)  # the keys it does not own under `extra`
            return validate(cls, data)
        except RecordError as exc:
            raise validation_error(exc, path, cls.describe()) from None

    @classmethod
    def from_own(cls, data: Mapping[str, Any]) -> Self:
        """The document of data okstra built itself (unchecked, no pydantic; use `parse`
        for data from outside). Unknown keys: kept by an open document, else `TypeError`."""
        built: Self = _build(cls, data)
        return built

    @classmethod
    def read(cls, path: Path) -> Self:
        """Read and validate the file at `path` (okstra's own file: never through a link)."""
        try:
            data = read_json(path, what=cls.describe(), follow=False)
        except DataFileError:
            raise
        except OkstraError as exc:
            raise DataFileError(exc.message, path=path, field=exc.field) from None
        return cls.parse(data, path=path)

    @classmethod
    def describe(cls) -> str:
        return cls.WHAT


def merged(data: Mapping[str, Any] | None, record: type[Any], **values: Any) -> dict[str, Any]:
    """A shared file's object (`data`, as read) with `values` (`record`'s fields by Python
    name) set under their names in files; every other key kept."""
    names = aliases_of(record)
    out = dict(data or {})
    for name, value in values.items():
        out[names.get(name, name)] = to_data(value)
    return out


def _open_schema(schema: dict[str, Any]) -> None:
    # The schema of a shared file: its own keys, and any other key.
    schema.get("properties", {}).pop("extra", None)
    schema["additionalProperties"] = True


# `extra` (the keys okstra does not own) is written first, then okstra's own keys.
OPEN_CONFIG = config(camel_case=True, by_name=True, json_schema_extra=_open_schema, spread="extra")


@dataclass(frozen=True, kw_only=True)
class OpenDocument(Document):
    """A document shared with people: keys okstra does not own are kept, as read, in
    `extra` at every level of the file (see `Document.NESTED`) and written back."""

    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Versioned(Document):
    """The layout versions a run manifest and a task manifest begin with."""

    schema_version: Literal["2.0"] = SCHEMA_VERSION
    execution_identity_version: Literal[2] = EXECUTION_IDENTITY_VERSION


@dataclass(frozen=True, kw_only=True)
class Event(Document):
    """What every `timeline.jsonl` line has: when, and which run."""

    WHAT: ClassVar[str] = "timeline event"

    at: StrictStr
    run_id: StrictStr


def _known(cls: type[Document]) -> tuple[dict[str, str], set[str]]:
    """(file key or Python name → field name, the tuple fields) of a document's fields."""
    names = aliases_of(cls)
    keys: dict[str, str] = {}
    tuples: set[str] = set()
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if f.name == "extra" and issubclass(cls, OpenDocument):
            continue
        if "tuple[" in str(f.type):
            tuples.add(f.name)
        keys[names.get(f.name, f.name)] = f.name
        keys.setdefault(f.name, f.name)
    return keys, tuples


def _partition(
    cls: type[Document], data: Mapping[str, Any]
) -> tuple[list[tuple[str, str, Any]], dict[str, Any]]:
    """(key as written, field name, value) of each key `cls` owns; the other keys."""
    keys, _ = _known(cls)
    owned: list[tuple[str, str, Any]] = []
    extra: dict[str, Any] = {}
    for key, value in data.items():
        name = keys.get(key)
        if name is None:
            extra[key] = value
        else:
            owned.append((key, name, value))
    return owned, extra


def _split(cls: type[Document], data: Any) -> Any:
    """An open document's data with the keys it does not own moved under `extra`."""
    if not isinstance(data, dict):
        return data  # refused by validation
    owned, extra = _partition(cls, data)
    out: dict[str, Any] = {}
    for key, name, value in owned:
        nested = cls.NESTED.get(name)
        out[key] = _nested(nested, value, _split, list) if nested else value
    if issubclass(cls, OpenDocument):
        out["extra"] = extra
    else:
        out.update(extra)  # refused by validation, naming the key
    return out


def _nested(
    nested: tuple[Shape, type[Document]],
    value: Any,
    each: Callable[[type[Document], Any], Any],
    sequence: Callable[[Iterable[Any]], Any],
) -> Any:
    """`each(document class, item)` applied to what a nested field holds (see `Shape`);
    a value of another shape is left as it is (validation names it)."""
    shape, sub = nested
    if shape == "one":
        return each(sub, value)
    if shape == "each" and isinstance(value, list | tuple):
        return sequence(each(sub, item) for item in value)
    if shape == "values" and isinstance(value, dict):
        return {k: each(sub, item) for k, item in value.items()}
    return value


def _build(cls: type[Any], data: Mapping[str, Any]) -> Any:
    _, tuples = _known(cls)
    owned, extra = _partition(cls, data)
    values: dict[str, Any] = {}
    for _key, name, value in owned:
        nested = cls.NESTED.get(name)
        if nested is not None and value is not None:
            value = _nested(nested, value, _build, tuple)
        elif name in tuples and isinstance(value, list):
            value = tuple(value)
        values[name] = value
    if extra and not issubclass(cls, OpenDocument):
        raise TypeError(f"{cls.__name__}: no fields {sorted(extra)}")
    if issubclass(cls, OpenDocument):
        values["extra"] = extra
    return cls(**values)
