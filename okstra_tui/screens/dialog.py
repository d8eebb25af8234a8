"""A yes/no dialog over the screen (answers True or False); No has the focus.

A stray Enter keeps things as they are: yes is `y` or the Yes button; `n` and Escape
answer no. A dialog closes once (`stale.close`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar, NamedTuple

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, Footer
from textual.widgets.button import ButtonVariant

from ..resources import ui_text
from ..widgets import Plain
from .stale import close, part


class Words(NamedTuple):
    """What a dialog says: question, what happens (inert; empty: no line), buttons."""

    question: str
    detail: str
    yes: str
    no: str


def answer_keys(yes: str, no: str) -> list[BindingType]:
    """A dialog's keys, `y` (`yes` in the footer) and `n`/Escape (`no`)."""
    return [
        Binding("y", "answer(True)", yes),
        Binding("n,escape", "answer(False)", no),
    ]


def on_yes(screen: Screen[Any], dialog: Screen[bool], then: Callable[[], object]) -> None:
    """Show `dialog` over `screen`; on a yes, `then()`."""

    def answered(yes: bool | None) -> None:
        if yes:
            then()

    screen.app.push_screen(dialog, answered)


class YesNoScreen(ModalScreen[bool]):
    """Base of the yes/no dialogs: a subclass sets `BINDINGS = answer_keys(...)`, its
    stylesheet, `TEXTS` (the catalog section of its words, formatted with `values()`),
    the buttons' ids and the Yes button's look."""

    TEXTS: ClassVar[str] = ""
    YES_ID: ClassVar[str] = "yes"
    NO_ID: ClassVar[str] = "no"
    YES_VARIANT: ClassVar[ButtonVariant] = "error"

    def values(self) -> Mapping[str, object]:
        """What the texts of `TEXTS` name (`{task}`, `{path}`, …)."""
        return {}

    def words(self) -> Words:
        """What the dialog says (read when it is composed)."""
        text = ui_text(self)
        values = self.values()
        return Words(*(text.get(f"{self.TEXTS}.{part}", **values) for part in Words._fields))

    def compose(self) -> ComposeResult:
        words = self.words()
        with Vertical(id="dialog"):
            yield Plain(words.question, id="question")
            if words.detail:
                yield Plain(words.detail, id="detail")
            with Horizontal(id="buttons"):
                yield Button(words.yes, id=self.YES_ID, variant=self.YES_VARIANT, compact=True)
                yield Button(words.no, id=self.NO_ID, compact=True)
        yield Footer()

    def on_mount(self) -> None:
        button = part(self, f"#{self.NO_ID}", Button)
        if button is not None:
            button.focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        close(self, event.button.id == self.YES_ID)

    def action_answer(self, yes: bool) -> None:
        close(self, yes)
