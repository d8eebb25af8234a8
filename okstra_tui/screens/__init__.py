"""One screen per prompt kind; `screen_for_prompt` picks it from `meta["stepKind"]`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from okstra_core.wizard import Prompt

from .base import (
    EditScreen,
    PickScreen,
    PromptScreen,
    RoleAddScreen,
    RoleCountScreen,
    RoleModelScreen,
)
from .confirm import ConfirmScreen
from .text import TextScreen

if TYPE_CHECKING:
    from okstra_core.session.wizard import WizardView

# Plain picks and texts share the generic screens.
_BY_STEP_KIND: dict[str, type[PromptScreen]] = {
    "role_count": RoleCountScreen,
    "role_add": RoleAddScreen,
    "role_model": RoleModelScreen,
    "edit_target": EditScreen,
    "confirm": ConfirmScreen,
}


def screen_for_prompt(prompt: Prompt, view: WizardView, project_root: Path) -> PromptScreen:
    """The screen that renders `prompt` (confirm shows the view's confirmation block too)."""
    generic = TextScreen if prompt.kind == "text" else PickScreen
    return _BY_STEP_KIND.get(prompt.step_kind, generic)(prompt, view, project_root)
