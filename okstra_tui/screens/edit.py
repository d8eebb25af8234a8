"""edit_target: the answered steps, in the order answered; choosing one rewinds to it."""

from __future__ import annotations

from ..resources import stylesheet
from ..widgets import Row
from .base import ChoiceScreen


class EditScreen(ChoiceScreen):
    """Pick the answer to change. Later answers are dropped but remembered as defaults."""

    CSS_PATH = stylesheet("edit")

    def rows(self) -> list[Row]:
        # The history's echo reads better than the raw "step: answer" option label.
        echoes = {e.step_id: e.echo for e in self.history}
        return [
            Row(o.value, (echoes.get(o.value) or o.label,), o.disabled_reason)
            for o in self.prompt.options
        ]
