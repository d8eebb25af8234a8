"""One screen per prompt kind; `screen_for_prompt` picks it from `meta["stepKind"]`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from okstra_core.wizard import HistoryEntry, Prompt
from okstra_core.wizard.confirm import Confirmation

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

# Plain picks and texts share the generic screens.
_BY_STEP_KIND: dict[str, type[PromptScreen]] = {
    "role_count": RoleCountScreen,
    "role_add": RoleAddScreen,
    "role_model": RoleModelScreen,
    "edit_target": EditScreen,
}


def screen_for_prompt(
    prompt: Prompt,
    history: Sequence[HistoryEntry],
    progress: tuple[int, int],
    *,
    project_root: Path | None = None,
    confirmation: Confirmation | None = None,
) -> PromptScreen:
    """The screen that renders `prompt` (confirm gets the confirmation block too)."""
    kind = prompt.step_kind
    if kind == "confirm" and confirmation is not None:
        return ConfirmScreen(
            prompt, history, progress, confirmation=confirmation, project_root=project_root
        )
    if kind not in _BY_STEP_KIND and prompt.kind == "text":
        return TextScreen(prompt, history, progress, project_root=project_root)
    cls = _BY_STEP_KIND.get(kind) or PickScreen
    return cls(prompt, history, progress)
