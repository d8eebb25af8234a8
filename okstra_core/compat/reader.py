"""Typed reading of an earlier okstra's state payload (v1, or its v2 shape).

A field of the wrong type is a `StateFileError` naming the file and the field;
`check_types` checks every field a conversion may read, so a malformed file is refused
as a whole.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import StateFileError
from ..records import dataclass
from .lookup import roster_providers
from .shapes import STRING_FIELDS, V1_PROVIDER_FIELDS


@dataclass(frozen=True)
class SourceReader:
    """Typed access to a source payload; a wrong type is a `StateFileError` naming the field."""

    raw: Mapping[str, Any]
    source: Path

    def _fail(self, name: str, expected: str) -> StateFileError:
        got = type(self.raw[name]).__name__
        return StateFileError(
            f"expected {expected} in an earlier okstra's wizard state, got {got}",
            path=self.source,
            field=name,
        )

    def string(self, *names: str) -> str:
        """The first non-empty of `names`, stripped ("" if none); each is type-checked."""
        found = ""
        for name in names:
            value = self.raw.get(name)
            if value is None:
                continue
            if not isinstance(value, str):
                raise self._fail(name, "a string")
            found = found or value.strip()
        return found

    def optional_bool(self, name: str) -> bool | None:
        value = self.raw.get(name)
        if value is not None and not isinstance(value, bool):
            raise self._fail(name, "true, false or null")
        return value

    def string_list(self, name: str) -> list[str]:
        value = self.raw.get(name)
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self._fail(name, "an array of strings")
        return list(value)

    def roster(self, *names: str) -> list[str]:
        """The first non-empty worker roster of `names` (a comma-separated string or an
        array of provider ids); each is type-checked."""
        found: list[str] = []
        for name in names:
            value = self.raw.get(name)
            if value is None:
                continue
            if isinstance(value, str):
                items = value.split(",")
            elif isinstance(value, list) and all(isinstance(v, str) for v in value):
                items = list(value)
            else:
                raise self._fail(name, "a comma-separated string or an array of provider ids")
            found = found or roster_providers(items)
        return found

    def provider_model(self, provider_id: str) -> str:
        """The legacy `<provider>_model` (or `<provider>Model`) value."""
        head, *rest = provider_id.replace("-", "_").split("_")
        camel = head + "".join(part[:1].upper() + part[1:] for part in rest) + "Model"
        return self.string(f"{provider_id.replace('-', '_')}_model", camel)


V1_ROSTER_FIELDS = ("workers_override", "workers", "workersOverride")
_V1_STRING_FIELDS = (
    *(f for f in V1_PROVIDER_FIELDS if f not in V1_ROSTER_FIELDS),
    "host_entry_mode",
)
_V1_BOOL_FIELDS = ("confirmed", "aborted", "use_defaults", "reuse_previous", "critic_pending_text")
_V1_LIST_FIELDS = ("answered", "available_functions", "profile_workers")


def check_types(reader: SourceReader) -> None:
    """Type-check every field the conversion may read, whether or not it is used, so a
    file is not converted differently depending on what its task type reads."""
    for name in (*STRING_FIELDS, *sorted(_V1_STRING_FIELDS)):
        reader.string(name)
    for name in V1_ROSTER_FIELDS:
        reader.roster(name)
    for name in _V1_BOOL_FIELDS:
        reader.optional_bool(name)
    for name in _V1_LIST_FIELDS:
        reader.string_list(name)
