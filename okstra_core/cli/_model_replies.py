"""The replies of `okstra models` and `okstra team` (their `--json`, and `_human`'s tables)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from ..records import config, dataclass


@dataclass(frozen=True, kw_only=True)
class ModelRow:
    """One model of `okstra models`: what it is, and whether it can run (and why not)."""

    __pydantic_config__ = config(camel_case=True)

    model_ref: str
    provider: str
    display: str
    execution: str
    aliases: tuple[str, ...]
    roles: tuple[str, ...]
    available_for: tuple[str, ...]
    available: bool
    reason: str | None


@dataclass(frozen=True, kw_only=True)
class ModelsReply:
    """`okstra models`: the pool, for one role or for any role."""

    __pydantic_config__ = config(camel_case=True)

    ok: Literal[True] = True
    host: str
    entry_mode: str
    role: str | None
    availability_for: str
    models: tuple[ModelRow, ...]


@dataclass(frozen=True, kw_only=True)
class TeamRow:
    """One role instance of `okstra team`, bound to its model."""

    __pydantic_config__ = config(camel_case=True)

    role: str
    ordinal: int
    duty: str
    provider: str
    model_ref: str | None
    model_id: str | None
    display: str
    execution: str
    runner: str
    host_model_value: str | None
    provenance: str


@dataclass(frozen=True, kw_only=True)
class DynamicRow:
    """A role the lead spawns at run time."""

    __pydantic_config__ = config()

    role: str
    duty: str
    description: str


@dataclass(frozen=True, kw_only=True)
class TeamReply:
    """`okstra team`: the resolved team."""

    __pydantic_config__ = config(camel_case=True)

    ok: Literal[True] = True
    task_type: str
    host: str
    entry_mode: str
    team: tuple[TeamRow, ...]
    dynamic_roles: tuple[DynamicRow, ...]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class TeamRefused:
    """`okstra team` when no team exists: the error (every failing candidate and
    constraint), then the host and entry mode it was resolved for."""

    __pydantic_config__ = config(camel_case=True, spread="error")

    error: Mapping[str, object]
    host: str
    entry_mode: str
