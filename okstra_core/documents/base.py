"""The base of every document okstra writes: one pydantic model writes and reads it.

Documents are frozen, camelCase on disk (`alias_generator=to_camel`), and refuse
unknown keys unless they are shared with people (`project.json`, `task-manifest.json`
keep keys okstra does not own). `read` turns any problem into a `DataFileError` naming
the file and the field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Self

import orjson
from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.alias_generators import to_camel

from ..errors import DataFileError, OkstraError
from ..store import dumps_json, read_json

__all__ = ["Document", "OpenDocument", "field_path", "validation_error"]


def field_path(exc: ValidationError) -> tuple[str, str]:
    """(dotted location, message) of the first problem of a validation error."""
    problem = exc.errors()[0]
    where = ""
    for part in problem["loc"]:
        where += f"[{part}]" if isinstance(part, int) else (f".{part}" if where else str(part))
    return where or "(root)", str(problem["msg"]).removeprefix("Value error, ")


def validation_error(exc: ValidationError, path: Path | None, what: str) -> DataFileError:
    where, message = field_path(exc)
    return DataFileError(f"{message} ({what})", path=path, field=where)


class Document(BaseModel):
    """A file okstra writes: frozen, camelCase, strict about unknown keys."""

    model_config = ConfigDict(
        frozen=True,
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        defer_build=True,
    )
    WHAT: ClassVar[str] = "document"  # what the file is, for messages

    def dump(self) -> dict[str, Any]:
        """The JSON object written (camelCase keys)."""
        return self.model_dump(mode="json", by_alias=True)

    def to_bytes(self) -> bytes:
        """The exact bytes of the file (canonical JSON)."""
        return dumps_json(self.dump())

    def jsonl(self) -> bytes:
        """The exact bytes of one JSONL line of this record."""
        return orjson.dumps(self.dump(), option=orjson.OPT_SORT_KEYS) + b"\n"

    @classmethod
    def parse(cls, data: Any, *, path: Path | None = None) -> Self:
        """Validate a decoded JSON value; a `DataFileError` naming the field otherwise."""
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise validation_error(exc, path, cls.describe()) from None

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


class OpenDocument(Document):
    """A document shared with people: keys okstra does not own are kept as they are."""

    model_config = ConfigDict(extra="allow")
