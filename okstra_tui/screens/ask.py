"""A yes/no question before a destructive action (stop a running lead, abort a setup);
No unless the person says yes."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.binding import BindingType

from ..resources import stylesheet
from .dialog import Words, YesNoScreen, answer_keys

if TYPE_CHECKING:
    from okstra_core.wizard.text import WizardText


class AskScreen(YesNoScreen):
    """Ask before doing something that cannot be undone (No has the focus); `yes` and
    `no` are the buttons' texts ("Stop (y)", "Keep running (n)")."""

    CSS_PATH = stylesheet("ask")
    BINDINGS: ClassVar[list[BindingType]] = answer_keys("Yes", "No")

    def __init__(self, question: str, detail: str, *, yes: str, no: str) -> None:
        super().__init__()
        self.question = question
        self.detail = detail
        self.yes_label = yes
        self.no_label = no

    def words(self) -> Words:
        return Words(self.question, self.detail, self.yes_label, self.no_label)


def ask(text: WizardText, key: str, action: str, **values: object) -> AskScreen:
    """The question `<key>_question`, `<key>_detail` (formatted with `values`) and the
    `app.ask.<action>_yes` / `_no` buttons."""
    return AskScreen(
        text.get(f"{key}_question", **values),
        text.get(f"{key}_detail", **values),
        yes=text.get(f"app.ask.{action}_yes"),
        no=text.get(f"app.ask.{action}_no"),
    )
