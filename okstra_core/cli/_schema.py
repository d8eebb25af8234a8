"""`okstra schema [NAME]`: the JSON Schema of a document, generated from its record."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..documents.schema import SCHEMAS, json_schema
from ..errors import UsageError
from ..records import json_schema as record_schema
from ..wizard.state import WizardState
from . import add_command

if TYPE_CHECKING:
    import argparse


def schemas() -> dict[str, Callable[[], dict[str, Any]]]:
    """Every schema name → its generator (documents plus the wizard state file)."""
    return {"wizard-state": lambda: record_schema(WizardState, mode="serialization"), **SCHEMAS}


def register(sub: Any) -> None:
    """Add `schema` to the top-level parser."""
    names = ", ".join(schemas())
    add_command(
        sub, "schema", f"print the JSON Schema of a document ({names})",
        "okstra schema                 list the documents that have a schema",
        "okstra schema run-manifest    the schema of a run's run-manifest.json",
        "okstra schema wizard-state    the schema of a wizard state file",
        args=(("name", dict(nargs="?", help=f"one of: {names}; none lists them")),),
    ).set_defaults(handler=_schema)  # fmt: skip


def _schema(ns: argparse.Namespace) -> tuple[dict[str, Any], int]:
    table = schemas()
    if ns.name is None:
        return {"ok": True, "schemas": list(table)}, 0
    if ns.name not in table:
        raise UsageError(
            f"unknown schema {ns.name!r}: expected one of {', '.join(table)}", field="name"
        )
    return json_schema(ns.name, table), 0
