"""confirm: the confirmation block with provenance and preflight; Launch / Edit / Abort."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Button
from textual.widgets.button import ButtonVariant

from ..messages import Answered, PreflightChecked
from ..resources import stylesheet, ui_text
from ..widgets import ConfirmationView
from .base import PromptScreen

# The confirm prompt's option values (SPEC §6.1): their button text key and variant.
_BUTTONS: dict[str, tuple[str, ButtonVariant]] = {
    "confirm": ("app.confirm.launch", "success"),
    "edit": ("app.confirm.edit", "default"),
    "abort": ("app.confirm.abort", "error"),
}


class ConfirmScreen(PromptScreen):
    """Review the whole setup, then launch it, change an answer, or abort.

    Args:
        confirmation: the engine's confirmation block (lines with provenance).

    The app runs a dry-run prepare meanwhile; its preflight arrives as a message.
    """

    CSS_PATH = stylesheet("confirm")
    HELP = "confirm"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("l", "answer('confirm')", "Launch"),
        Binding("a", "answer('abort')", "Abort"),
    ]

    def __init__(
        self,
        prompt: Any,
        history: Sequence[Any],
        progress: tuple[int, int],
        *,
        confirmation: Any,
    ) -> None:
        super().__init__(prompt, history, progress)
        self.confirmation = confirmation

    def compose_body(self) -> ComposeResult:
        text = ui_text(self)
        with VerticalScroll(id="summary"):
            yield ConfirmationView(self.confirmation, text=text)
        with Horizontal(id="actions"):
            for option in self.prompt.options:
                key, variant = _BUTTONS.get(option.value, ("", "default"))
                yield Button(
                    text.get(key) if key else option.label,
                    id=f"do-{option.value}",
                    variant=variant,
                    compact=True,
                    disabled=option.disabled_reason is not None,
                    tooltip=option.disabled_reason,
                )

    def on_mount(self) -> None:
        default = self.prompt.default or "confirm"
        for button in self.query(Button):
            if button.id == f"do-{default}" and not button.disabled:
                button.focus()
                return

    def on_preflight_checked(self, message: PreflightChecked) -> None:
        message.stop()
        view = self.query_one(ConfirmationView)
        view.set_preflight(message.results, message.notes, message.error)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id and event.button.id.startswith("do-"):
            self.action_answer(event.button.id.removeprefix("do-"))

    def action_answer(self, value: str) -> None:
        if any(o.value == value and o.disabled_reason is None for o in self.prompt.options):
            self.clear_error()
            self.post_message(Answered(value))

    def action_edit(self) -> None:
        # On the confirm screen "edit" is an answer the engine turns into edit_target.
        self.action_answer("edit")
