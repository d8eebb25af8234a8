"""role-count:<role>: how many instances of an adjustable role (min..max)."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.widgets import Static

from ..resources import stylesheet
from .base import ChoiceScreen


def role_facts(meta: dict[str, Any]) -> str:
    """The role line: role name, its duty, the allowed range, what the role does."""
    parts = [str(meta.get("role", ""))]
    if meta.get("duty"):
        parts.append(str(meta["duty"]))
    if meta.get("min") is not None and meta.get("max") is not None:
        parts.append(f"{meta['min']}–{meta['max']}")
    line = " · ".join(p for p in parts if p)
    if meta.get("description"):
        line += "\n" + str(meta["description"])
    return line


class RoleCountScreen(ChoiceScreen):
    """Counts from min to max (the engine marks the recommended one), the duty shown."""

    CSS_PATH = stylesheet("role_count")
    HELP = "role_count"

    def compose_body(self) -> ComposeResult:
        yield Static(role_facts(self.prompt.meta), id="role", markup=False)
        yield from super().compose_body()
