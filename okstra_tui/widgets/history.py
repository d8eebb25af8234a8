"""The history panel: the answered steps with their echo; choosing one rewinds to it.
And the key footer, rebuilt only when the keys it shows change."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, OptionList
from textual.widgets.option_list import Option

from okstra_core.wizard.text import WizardText

from ..messages import RewindRequested
from .plain import block

if TYPE_CHECKING:
    from okstra_core.wizard import HistoryEntry


def entry_text(entry: HistoryEntry) -> Text:
    """One history line: the echo of the answer (falls back to label: answer)."""
    echo = getattr(entry, "echo", "") or f"{entry.label}: {entry.answer}"
    return Text(block(echo), overflow="fold")


class HistoryPanel(OptionList):
    """Answered steps in answer order, beside a prompt. Not in the Tab order (Enter here
    rewinds): entered by `enter()` (History key, click), left with Escape."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select", "Rewind here"),
        Binding("escape", "leave", "Leave history"),
    ]

    class Left(Message):
        """The person left the panel (Escape): the screen gives the focus back."""

    def __init__(self, entries: Sequence[HistoryEntry], *, text: WizardText) -> None:
        super().__init__(id="history")
        self.border_title = text.get("app.history.title")
        self.can_focus = False
        self.step_ids = tuple(e.step_id for e in entries)
        if entries:
            self.add_options(Option(entry_text(e), id=e.step_id) for e in entries)
        else:
            self.add_option(
                Option(Text(text.get("app.history.empty"), style="italic"), disabled=True)
            )

    def on_mount(self) -> None:
        if self.step_ids:  # the newest answer
            self.highlighted = len(self.step_ids) - 1

    def enter(self) -> None:
        """Take the focus (the only way in: the panel is not in the Tab order)."""
        if self.step_ids:
            self.can_focus = True
            self.focus()

    def on_click(self) -> None:
        self.enter()

    def on_blur(self) -> None:
        self.can_focus = False

    def action_leave(self) -> None:
        self.post_message(self.Left())

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None:
            self.post_message(RewindRequested(event.option.id))


class KeysFooter(Footer):
    """`Footer` without the rebuilds that would show the same keys again: Textual's
    `Footer` recomposes at every bindings refresh (four or five times while a prompt
    screen appears, with the same keys), most of what showing a screen restyles; this
    one compares what it would show with what it shows."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._shown: tuple[object, ...] | None = None

    def _keys(self) -> tuple[object, ...]:
        """Everything `Footer.compose` reads."""
        return (
            self.compact,
            self.show_command_palette,
            tuple(
                (key, binding, enabled, tooltip)
                for key, (_node, binding, enabled, tooltip) in self.screen.active_bindings.items()
            ),
        )

    def bindings_changed(self, screen: Screen[Any]) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen:
            self.call_after_refresh(self._recompose_if_changed)

    async def _recompose_if_changed(self) -> None:
        if not self.is_attached:
            return
        keys = self._keys()
        if keys == self._shown:
            return
        self._shown = keys
        await self.recompose()
