"""The "delete this setup?" dialog of the start screen (answers True or False)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual.binding import BindingType

from ..resources import stylesheet
from .dialog import YesNoScreen, answer_keys


class DeleteWizardScreen(YesNoScreen):
    """Ask before the state file at `path` of the setup for `task` is deleted (Keep has
    the focus: deleting needs a deliberate choice)."""

    CSS_PATH = stylesheet("delete")
    TEXTS = "app.delete"
    BINDINGS: ClassVar[list[BindingType]] = answer_keys("Delete", "Keep")
    YES_ID = "delete"
    NO_ID = "keep"

    def __init__(self, task: str, path: Path) -> None:
        super().__init__()
        self.task_name = task
        self.path = path

    def values(self) -> dict[str, object]:
        return {"task": self.task_name, "path": self.path}
