"""role-add:<role>: whether to add an optional role (don't add / add N)."""

from __future__ import annotations

from textual.app import ComposeResult

from ..resources import stylesheet
from ..widgets import Plain
from .base import ChoiceScreen
from .role_count import role_facts


class RoleAddScreen(ChoiceScreen):
    """ "Don't add" (the default) or add 1..max instances of an optional role."""

    CSS_PATH = stylesheet("role_add")
    HELP = "role_add"

    def compose_body(self) -> ComposeResult:
        yield Plain(role_facts(self.prompt.meta), id="role")
        yield from super().compose_body()
