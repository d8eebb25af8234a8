"""The one-line answer box of a text prompt: Enter submits (shown in the footer), Tab
accepts the grey completion on offer (else moves the focus on), as Right and End do."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.widgets import Input


class AnswerInput(Input):
    """An `Input` whose submit key is in the footer and whose Tab completes."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "submit", "Submit"),
        Binding("tab", "complete", "Complete", show=False),
    ]

    @property
    def completion(self) -> str:
        """The suggestion on offer for the current value ("" when none)."""
        suggestion = self._suggestion
        return suggestion if len(suggestion) > len(self.value) else ""

    def action_complete(self) -> None:
        """Accept the suggestion on offer; without one, Tab moves the focus on."""
        completion = self.completion
        if completion and self.cursor_at_end:
            self.value = completion
            self.cursor_position = len(completion)
            return
        self.screen.focus_next()
