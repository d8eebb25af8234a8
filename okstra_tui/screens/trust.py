"""The "trust this project?" dialog (answers True or False).

Shown before the first launch in a project not trusted yet (`okstra_core.trust`): the
agent CLIs run the project's own settings, so "Not now" has the focus.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual.binding import BindingType

from ..resources import stylesheet
from .dialog import YesNoScreen, answer_keys


class TrustScreen(YesNoScreen):
    """Ask whether to trust the `project` directory before its first launch."""

    CSS_PATH = stylesheet("trust")
    TEXTS = "app.trust"
    BINDINGS: ClassVar[list[BindingType]] = answer_keys("Trust", "Not now")
    YES_ID = "trust"
    NO_ID = "not-now"
    YES_VARIANT = "warning"

    def __init__(self, project: Path) -> None:
        super().__init__()
        self.project = project

    def values(self) -> dict[str, object]:
        return {"project": self.project}
