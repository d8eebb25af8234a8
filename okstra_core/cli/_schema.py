"""`okstra schema [NAME]`: the JSON Schema of a document okstra writes or reads.

The schemas are generated from the models that write and read the files
(`okstra_core.documents`, the run request, the wizard state), so a file okstra
wrote always validates against the schema of the same version.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from ..documents.schema import SCHEMAS, json_schema
from ..errors import UsageError
from ..records import json_schema as record_schema
from ..wizard.state import WizardState


def _wizard_state() -> dict[str, Any]:
    return record_schema(WizardState, mode="serialization")


def schemas() -> dict[str, Callable[[], dict[str, Any]]]:
    """Every schema name → its generator (documents plus the wizard state file)."""
    return {"wizard-state": _wizard_state, **SCHEMAS}


def register(sub: Any) -> None:
    """Add `schema` to the top-level parser."""
    names = ", ".join(schemas())
    parser = sub.add_parser(
        "schema",
        help=f"print the JSON Schema of a document ({names})",
        epilog=(
            "examples:\n"
            "  okstra schema                 list the documents that have a schema\n"
            "  okstra schema run-manifest    the schema of a run's run-manifest.json\n"
            "  okstra schema wizard-state    the schema of a wizard state file"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("name", nargs="?", help=f"one of: {names}; none lists them")
    parser.set_defaults(handler=_schema)


def _schema(ns: argparse.Namespace) -> tuple[dict[str, Any], int]:
    table = schemas()
    if ns.name is None:
        return {"ok": True, "schemas": list(table)}, 0
    if ns.name not in table:
        raise UsageError(
            f"unknown schema {ns.name!r}: expected one of {', '.join(table)}", field="name"
        )
    if ns.name == "wizard-state":
        schema = table[ns.name]()
        schema.setdefault("title", ns.name)
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        return schema, 0
    return json_schema(ns.name), 0
