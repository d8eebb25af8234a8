"""confirm: the confirmation block, preflight and the launch preview; Launch / Edit / Abort.

Launch takes a deliberate key on a screen the person has seen: the screen is guarded,
no button has the focus at first, and Launch is `l` or the Launch button.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Button, Collapsible
from textual.widgets.button import ButtonVariant

from okstra_core.display import inert_markup

from ..messages import Answered, PreflightChecked
from ..resources import ui_text
from ..widgets import ConfirmationView, Plain, PreflightView, block, line
from ..widgets.confirmation import preview_text, preview_title
from .base import GuardedScreen, PromptScreen
from .dialog import ask, gone, on_yes, part

if TYPE_CHECKING:
    from okstra_core.prepare import PrepareResult

# The confirm prompt's option values: their button text key and variant.
_BUTTONS: dict[str, tuple[str, ButtonVariant]] = {
    "confirm": ("app.confirm.launch", "success"),
    "edit": ("app.confirm.edit", "default"),
    "abort": ("app.confirm.abort", "error"),
}


class ConfirmScreen(GuardedScreen, PromptScreen):
    """Review the whole setup (the engine's `confirmation`), then launch it, change an
    answer, or abort; the app's dry-run prepare sends its preflight and plan."""

    HELP = "confirm"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("l", "answer('confirm')", "Launch"),
        Binding("a", "answer('abort')", "Abort"),
        Binding("p", "toggle_preview", "Preview"),
        Binding("x", "lead_access", "Lead access"),
    ]

    # The dry run's plan, and the message that brought it.
    plan: PrepareResult | None = None
    _checked: PreflightChecked | None = None

    def compose_body(self) -> ComposeResult:
        text = ui_text(self)
        with VerticalScroll(id="summary"):
            yield ConfirmationView(self.view.confirmation, text=text)
        yield PreflightView(text=text)
        with (
            Collapsible(
                title=inert_markup(preview_title(None, text)), collapsed=True, id="preview"
            ),
            VerticalScroll(id="preview-body"),
        ):
            yield Plain(preview_text(None, self.project_root, text), id="preview-text")
        with Horizontal(id="actions"):
            for option in self.prompt.options:
                key, variant = _BUTTONS.get(option.value, ("", "default"))
                yield Button(
                    Text(text.get(key) if key else line(option.label)),
                    id=f"do-{option.value}",
                    variant=variant,
                    compact=True,
                    disabled=True,  # until armed
                    tooltip=Text(block(option.disabled_reason)) if option.disabled_reason else None,
                )
            # Once armed: which key launches (Enter does not).
            yield Plain("", id="armed-hint")

    def on_mount(self) -> None:
        self.focus_answer()  # no button: Enter must never launch from here

    def focus_answer(self) -> None:
        summary = part(self, "#summary", VerticalScroll)
        if summary is not None:
            summary.focus()

    def on_armed_changed(self, armed: bool) -> None:
        if gone(self):
            return  # armed by its timer after the screen was replaced
        for option in self.prompt.options:
            button = self.query_one(f"#do-{option.value}", Button)
            button.disabled = not armed or option.disabled_reason is not None
        hint = ui_text(self).get("app.confirm.armed") if armed else ""
        self.query_one("#armed-hint", Plain).update(hint)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Launch and Abort show dimmed until the screen is armed.
        if action == "answer":
            return True if self.armed else None
        return super().check_action(action, parameters)

    def on_preflight_checked(self, message: PreflightChecked) -> None:
        message.stop()
        self.plan = message.plan
        self._checked = message
        self._show_preflight()

    def _show_preflight(self, tries: int = 20) -> None:
        """Show the dry run's outcome once its widgets are mounted (it can arrive before
        they are, or after the screen was replaced)."""
        message = self._checked
        if message is None or gone(self):
            return
        view = part(self, "#preflight", PreflightView)
        preview = part(self, "#preview", Collapsible)
        body = part(self, "#preview-text", Plain)
        if view is None or preview is None or body is None:
            if tries:
                self.call_after_refresh(self._show_preflight, tries - 1)
            return
        view.set_preflight(message.results, message.notes, message.error)
        text = ui_text(self)
        # The title names the tmux window (data) in a markup string.
        preview.title = inert_markup(preview_title(message.plan, text))
        environment = getattr(self.app, "environment", None)
        which = environment.which if environment is not None else None
        body.update(preview_text(message.plan, self.project_root, text, message.error, which))

    def action_lead_access(self) -> None:
        """The lead's next access level (ask → edits → full), planned by the dry run."""
        next_level = getattr(self.app, "next_lead_access", None)
        if next_level is not None:
            next_level(self)

    def action_toggle_preview(self) -> None:
        """Open the preview with its body focused (to scroll it), or close it."""
        preview = part(self, "#preview", Collapsible)
        if preview is None:
            return
        preview.collapsed = not preview.collapsed
        body = None if preview.collapsed else part(self, "#preview-body", VerticalScroll)
        if body is not None:
            body.focus()
        else:
            self.focus_answer()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id and event.button.id.startswith("do-"):
            self.action_answer(event.button.id.removeprefix("do-"))

    def action_answer(self, value: str) -> None:
        if not self.armed:
            return
        if value != "abort":
            self._answer(value)
        elif self.is_active:  # not for a second `a` while the question opens
            # Abort closes the setup for good: asked first, No by default.
            question = ask(ui_text(self), "app.ask.abort", "abort")
            on_yes(self, question, lambda: self._answer("abort"))

    def _answer(self, value: str) -> None:
        if any(o.value == value and o.disabled_reason is None for o in self.prompt.options):
            self.clear_error()
            self.post_message(Answered(value, step=self.prompt.id))

    def action_edit(self) -> None:
        self.action_answer("edit")
