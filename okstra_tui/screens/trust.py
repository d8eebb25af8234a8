"""The "trust this project?" dialog (answers True or False).

Shown once before a lead is launched in a project its person has not trusted
(`okstra_core.trust`): the agent CLIs run the project's own settings, so the first
launch there is a decision, never the effect of a stray Enter — "Not now" has the focus.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual.binding import BindingType

from ..resources import stylesheet
from .dialog import YesNoScreen, answer_keys


class TrustScreen(YesNoScreen):
    """Ask whether to trust the project before its first launch.

    Args:
        project: the project's directory (shown in full).
    """

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
