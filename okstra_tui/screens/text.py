"""A text prompt: task group, task id, brief path, approved plan, directive, related tasks.

The engine validates the text; a refusal shows under the input, which keeps its value
and focus so the person corrects it in place.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.widgets import Input

from ..messages import Answered
from ..resources import stylesheet
from ..widgets import AnswerInput
from .base import PromptScreen


class TextScreen(PromptScreen):
    """Type an answer; Enter submits it; Escape goes back one step."""

    CSS_PATH = stylesheet("text")

    def compose_body(self) -> ComposeResult:
        yield AnswerInput(
            value=self.prompt.default or "",
            placeholder=str(self.prompt.meta.get("placeholder", "")),
            id="answer",
            select_on_focus=False,
        )

    def on_mount(self) -> None:
        answer = self.query_one("#answer", Input)
        answer.cursor_blink = getattr(self.app, "cursor_blink", True)
        answer.focus()

    def focus_answer(self) -> None:
        self.query_one("#answer", Input).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Letters go into the box: "e" cannot be Edit here (the History key is).
        if action == "edit":
            return False
        return super().check_action(action, parameters)

    def unsaved_text(self) -> str:
        value = self.query_one("#answer", Input).value
        return value if value.strip() and value != (self.prompt.default or "") else ""

    def show_error(self, message: str) -> None:
        super().show_error(message)
        self.query_one("#answer", Input).set_class(bool(message), "-invalid")

    @on(Input.Changed, "#answer")
    def _typing_clears_error(self) -> None:
        self.clear_error()

    @on(Input.Submitted, "#answer")
    def _submit(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_message(Answered(event.value, step=self.prompt.id))
