"""role-count:<role> (how many instances of an adjustable role) and role-add:<role>
(whether to add an optional role)."""

from __future__ import annotations

from textual.app import ComposeResult

from okstra_core.wizard.prompt import PromptMeta

from ..resources import stylesheet
from ..widgets import Plain
from .base import ChoiceScreen


def role_facts(meta: PromptMeta) -> str:
    """The role line: role name, its duty, the allowed range, what the role does."""
    parts = [meta.get("role", "")]
    if meta.get("duty"):
        parts.append(meta.get("duty", ""))
    if "min" in meta and "max" in meta:
        parts.append(f"{meta['min']}–{meta['max']}")
    line = " · ".join(p for p in parts if p)
    if meta.get("description"):
        line += "\n" + meta.get("description", "")
    return line


class RoleCountScreen(ChoiceScreen):
    """Counts from min to max (the engine marks the recommended one), the duty shown."""

    CSS_PATH = stylesheet("role_count")
    HELP = "role_count"

    def compose_body(self) -> ComposeResult:
        yield Plain(role_facts(self.prompt.meta), id="role")
        yield from super().compose_body()


class RoleAddScreen(ChoiceScreen):
    """ "Don't add" (the default) or add 1..max instances of an optional role."""

    CSS_PATH = stylesheet("role_add")
    HELP = "role_add"

    def compose_body(self) -> ComposeResult:
        yield Plain(role_facts(self.prompt.meta), id="role")
        yield from super().compose_body()
