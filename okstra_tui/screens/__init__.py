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
}


def screen_for_prompt(prompt: Prompt, view: WizardView, project_root: Path) -> PromptScreen:
    """The screen that renders `prompt` (confirm shows the view's confirmation block too)."""
    kind = prompt.step_kind
    if kind == "confirm":
        return ConfirmScreen(prompt, view, project_root)
    if kind not in _BY_STEP_KIND and prompt.kind == "text":
        return TextScreen(prompt, view, project_root)
    cls = _BY_STEP_KIND.get(kind) or PickScreen
    return cls(prompt, view, project_root)
