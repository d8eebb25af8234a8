"""The "launch another run of this setup?" dialog (answers True or False; "Not now" has
the focus: a second run is a decision, never the effect of a stray Enter)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual.binding import BindingType

from ..resources import stylesheet
from .dialog import YesNoScreen, answer_keys


class RelaunchScreen(YesNoScreen):
    """Ask before the setup `task` (key · type), which launched run `run_id` in `run_dir`,
    launches another."""

    CSS_PATH = stylesheet("relaunch")
    TEXTS = "app.relaunch"
    BINDINGS: ClassVar[list[BindingType]] = answer_keys("Launch another", "Not now")
    YES_ID = "again"
    NO_ID = "not-now"
    YES_VARIANT = "warning"

    def __init__(self, task: str, run_id: str, run_dir: Path) -> None:
        super().__init__()
        self.task_name = task
        self.run_id = run_id
        self.run_dir = run_dir

    def values(self) -> dict[str, object]:
        return {"task": self.task_name, "run_id": self.run_id, "run_dir": self.run_dir}
