"""The "discard what you typed?" dialog: a rewind or Back would lose unsubmitted text."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import BindingType

from ..resources import stylesheet
from .dialog import YesNoScreen, answer_keys

# How much of the typed text the dialog quotes.
_QUOTE = 60


class DiscardScreen(YesNoScreen):
    """Ask before the `typed` text is dropped by going back (Keep has the focus)."""

    CSS_PATH = stylesheet("discard")
    TEXTS = "app.discard"
    BINDINGS: ClassVar[list[BindingType]] = answer_keys("Discard", "Keep typing")
    YES_ID = "discard"
    NO_ID = "keep"

    def __init__(self, typed: str) -> None:
        super().__init__()
        self.typed = typed

    def values(self) -> dict[str, object]:
        quoted = " ".join(self.typed.split())
        if len(quoted) > _QUOTE:
            quoted = quoted[: _QUOTE - 1] + "…"
        return {"text": quoted}
