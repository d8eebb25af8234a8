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
from .base import PromptScreen


class TextScreen(PromptScreen):
    """Type an answer; Enter submits it; Escape goes back one step."""

    CSS_PATH = stylesheet("text")

    def compose_body(self) -> ComposeResult:
        yield Input(
            value=self.prompt.default or "",
            placeholder=str(self.prompt.meta.get("placeholder", "")),
            id="answer",
            select_on_focus=False,
        )

    def on_mount(self) -> None:
        answer = self.query_one("#answer", Input)
        answer.cursor_blink = getattr(self.app, "cursor_blink", True)
        answer.focus()

    def show_error(self, message: str) -> None:
        super().show_error(message)
        self.query_one("#answer", Input).set_class(bool(message), "-invalid")

    @on(Input.Changed, "#answer")
    def _typing_clears_error(self) -> None:
        self.clear_error()

    @on(Input.Submitted, "#answer")
    def _submit(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_message(Answered(event.value))
