"""What every prompt screen shares: the history panel, the prompt header, the error line.

A prompt screen renders one `Prompt` and posts what the person chose (`Answered`); a
refused answer comes back through `show_error()`, inline, and the screen stays usable.

The choice screens of the role steps: role-count:<role> (how many instances of an
adjustable role), role-add:<role> (whether to add an optional role) and
role-model:<role>:<n> (which model runs one instance: a table of model ref, display name
and provider, where models the resolver rules out stay listed, dimmed, with the reason);
edit_target lists the answered steps, in the order answered, and choosing one rewinds.

Guarded screens act on a deliberate key only: keys typed ahead never reach them. Enter
pressed several times before the confirm screen must not launch a run nobody saw. A
guarded screen is armed `ARM_DELAY` seconds after its first paint (its acting widgets
disabled until then), and the app drops every key read from the terminal before that
(`accepts_key`), however late it gets round to it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import events
from textual._time import get_time
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Header

from okstra_core.wizard import Option, Prompt
from okstra_core.wizard.ids import DEFAULTED_KINDS
from okstra_core.wizard.prompt import PromptMeta
from okstra_core.wizard.text import WizardText

from ..messages import Answered, BackRequested, DefaultsRequested, EditRequested, RewindRequested
from ..resources import HELP_PANEL_BINDINGS, help_text, keys_markdown, ui_text
from ..widgets import HistoryPanel, KeysFooter, OptionTable, Plain, Row
from ..widgets.confirmation import provenance_words
from .dialog import DiscardScreen, on_yes, part, show_error

if TYPE_CHECKING:
    from okstra_core.session.wizard import WizardView

# Quitting and interrupting lose nothing: they work armed or not.
ALWAYS_ALLOWED = frozenset({"ctrl+c", "ctrl+q"})


class Armed(Message):
    """A guarded screen now accepts keys (its acting widgets are enabled)."""


class GuardedScreen:
    """Mixin for a `Screen`: disarmed until shown and settled, then armed
    (`on_armed_changed` enables what acts)."""

    # Too short to read the screen and press a key; too short to notice as a wait.
    ARM_DELAY: ClassVar[float] = 0.4

    _armed_at: float | None = None

    @property
    def awaits_key(self) -> bool:
        """Whether the screen now waits for a deliberate key (guarded while it does)."""
        return True

    @property
    def armed(self) -> bool:
        """The screen has been shown, has settled, and acts on fresh keys."""
        return self._armed_at is not None

    def accepts_key(self, event: events.Key) -> bool:
        """Whether `event` may act here: pressed after the screen was armed (anything,
        once the screen no longer waits for a deliberate key)."""
        if event.key in ALWAYS_ALLOWED or not self.awaits_key:
            return True
        armed_at = self._armed_at
        return armed_at is not None and event.time >= armed_at

    def _on_mount(self, event: events.Mount) -> None:
        # The delay runs from the first refresh (the screen is on the terminal).
        self.call_after_refresh(self._shown)  # type: ignore[attr-defined]

    def _shown(self) -> None:
        self.set_timer(self.ARM_DELAY, self._arm)  # type: ignore[attr-defined]

    def _arm(self) -> None:
        self._armed_at = get_time()
        self.on_armed_changed(True)
        self.refresh_bindings()  # type: ignore[attr-defined]
        self.post_message(Armed())  # type: ignore[attr-defined]

    def on_armed_changed(self, armed: bool) -> None:
        """Enable or disable the widgets that act (override)."""


def progress_text(progress: tuple[int, int], text: WizardText) -> str:
    """ "Step n of ~m": the current step is the one after the answered ones."""
    current = progress[0] + 1
    return text.get("app.progress", current=current, total=max(progress[1], current))


class PromptScreen(Screen[None]):
    """Base of the screens that show one wizard `prompt` beside the `history` panel of
    `view` (its `progress`: answered, ~total); paths are relative to `project_root`."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back"),
        Binding("backspace", "back", "Back", show=False),
        Binding("e", "edit", "Edit"),
        # Never by Tab: Enter there rewinds, and Tab, Enter must not drop answers.
        Binding("ctrl+r", "history", "History"),
        *HELP_PANEL_BINDINGS,
    ]
    # The screen's help file, `screens/<HELP>.help.md`; "?" shows it above the keys.
    HELP: ClassVar[str | None] = None

    def __init__(self, prompt: Prompt, view: WizardView, project_root: Path) -> None:
        super().__init__(classes="prompt-screen")
        self.prompt = prompt
        self.view = view
        self.project_root = project_root

    @property
    def step_kind(self) -> str:
        return self.prompt.step_kind

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="main"):
            yield HistoryPanel(self.view.history, text=ui_text(self))
            with Vertical(id="prompt"):
                yield Plain(self.prompt.label, id="label")
                if self.prompt.help:
                    yield Plain(self.prompt.help, id="help")
                yield from self.compose_body()
                yield Plain("", id="error")
        # The keys fit 80 columns only without the palette's (`?` lists it).
        yield KeysFooter(show_command_palette=False)

    @property
    def help_markdown(self) -> str:
        """The text of this screen's help file ("" when it has none)."""
        return help_text(self.HELP) if self.HELP else ""

    def action_toggle_help(self) -> None:
        """Show or hide the help panel under the prompt: the help text and the keys."""
        shown = part(self, "#screen-help", VerticalScroll)
        if shown is not None:
            shown.toggle_class("-hidden")
            return
        prompt = part(self, "#prompt", Vertical)
        if prompt is None or not self.is_active:
            return  # a "?" that reached a screen already replaced
        # Deferred: the Markdown widget pulls in markdown-it, needed only here.
        from textual.widgets import Markdown

        keys = keys_markdown(self, ui_text(self).get("app.ask.title_help"))
        body = f"{self.help_markdown}\n\n{keys}" if self.help_markdown else keys
        panel = VerticalScroll(Markdown(body), id="screen-help")
        panel.border_title = ui_text(self).get("app.help_title")
        prompt.mount(panel)

    def on_screen_resume(self) -> None:
        self.sub_title = (
            f"{self.app.sub_title} · {progress_text(self.view.progress, ui_text(self))}"
        )

    def compose_body(self) -> ComposeResult:
        """The widgets that take the answer (one screen per prompt kind)."""
        yield from ()

    def show_error(self, message: str) -> None:
        """Show a refused answer inline; the screen stays usable."""
        show_error(self, message)

    def clear_error(self) -> None:
        self.show_error("")

    def unsaved_text(self) -> str:
        """What the person typed and has not submitted ("" when nothing would be lost)."""
        return ""

    def action_history(self) -> None:
        """Move the focus to the history panel."""
        panel = part(self, "#history", HistoryPanel)
        if panel is not None:
            panel.enter()

    def _after_discard_check(self, message: RewindRequested | BackRequested) -> None:
        """Post `message` to the app — after asking, when typed text would be lost."""
        if self.unsaved_text():
            on_yes(self, DiscardScreen(self.unsaved_text()), lambda: self.post_message(message))
        else:
            self.post_message(message)

    def on_rewind_requested(self, message: RewindRequested) -> None:
        if message.checked:  # the app rewinds
            return
        message.stop()
        self._after_discard_check(RewindRequested(message.step_id, checked=True))

    def on_history_panel_left(self, message: HistoryPanel.Left) -> None:
        self.focus_answer()

    def focus_answer(self) -> None:
        """Give the focus back to what takes the answer."""
        self.focus_next()

    def action_back(self) -> None:
        self._after_discard_check(BackRequested())

    def action_edit(self) -> None:
        self.post_message(EditRequested())


class ChoiceScreen(PromptScreen):
    """A prompt answered by choosing one row of an option table (the default highlighted);
    from the task type on, `d` takes every default up to the confirmation."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("d", "accept_defaults", "All defaults")]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "accept_defaults":
            return self.prompt.meta.get("stepKind") in DEFAULTED_KINDS
        return super().check_action(action, parameters)

    def action_accept_defaults(self) -> None:
        """This step and the following ones: each its default, while one can be taken."""
        self.clear_error()
        self.post_message(DefaultsRequested(step=self.prompt.id))

    def rows(self) -> list[Row]:
        """The options as rows: the label, its summary (if any), disabled reason."""
        return [
            Row(o.value, (o.label,), o.disabled_reason, detail=o.meta.get("summary") or None)
            for o in self.prompt.options
        ]

    def compose_body(self) -> ComposeResult:
        yield OptionTable(self.rows(), selected=self.prompt.default, id="options")

    def on_mount(self) -> None:
        self.focus_answer()

    def focus_answer(self) -> None:
        options = part(self, "#options", OptionTable)
        if options is not None:
            options.focus()

    def on_option_list_option_selected(self, event: OptionTable.OptionSelected) -> None:
        if event.option_list.id != "options" or event.option.id is None:
            return
        event.stop()
        self.clear_error()
        self.post_message(Answered(event.option.id, step=self.prompt.id))


class PickScreen(ChoiceScreen):
    """A plain pick prompt: task, task type, reuse, directive or related-tasks choice."""


def role_facts(meta: PromptMeta) -> str:
    """The role line: role name, its duty, the allowed range, what the role does."""
    parts = [meta.get("role", "")]
    if meta.get("duty"):
        parts.append(meta.get("duty", ""))
    if "min" in meta and "max" in meta:
        parts.append(f"{meta['min']}–{meta['max']}")
    line = " · ".join(p for p in parts if p)
    if meta.get("description"):
        line += "\n" + meta.get("description", "")
    return line


class _RoleScreen(ChoiceScreen):
    """A choice about one role, under its role line."""

    def compose_body(self) -> ComposeResult:
        yield Plain(role_facts(self.prompt.meta), id="role")
        yield from super().compose_body()


class RoleCountScreen(_RoleScreen):
    """Counts from min to max (the engine marks the recommended one), the duty shown."""

    HELP = "role_count"


class RoleAddScreen(_RoleScreen):
    """ "Don't add" (the default) or add 1..max instances of an optional role."""

    HELP = "role_add"


def model_row(option: Option, text: WizardText | None = None) -> Row:
    """One model option as (model ref, display name, provider) and why it is the default."""
    meta = option.meta
    provenance = meta.get("provenance") or None
    provider = meta.get("provider") or option.value.split("/", 1)[0]
    cells = (option.value, meta.get("display") or option.label, provider)
    note = provenance_words(provenance, text) if text and provenance else provenance
    return Row(option.value, cells, option.disabled_reason, note=note)


def model_rows(options: Sequence[Option], text: WizardText | None = None) -> list[Row]:
    """The model table's rows; only the default Enter takes (the first ranked default that
    can be chosen) is marked as the default."""
    rows: list[Row] = []
    marked = False
    for option in options:
        row = model_row(option, text)
        provenance = str(option.meta.get("provenance") or "")
        if provenance.startswith("default:"):
            if marked or option.disabled_reason is not None:
                row = dataclasses.replace(row, note=None)
            else:
                marked = True
        rows.append(row)
    return rows


class RoleModelScreen(ChoiceScreen):
    """Pick the model of one role instance from the pool."""

    HELP = "role_model"

    def compose_body(self) -> ComposeResult:
        description = self.prompt.meta.get("description")
        if description:
            yield Plain(str(description), id="role")
        yield from super().compose_body()

    def on_mount(self) -> None:
        super().on_mount()
        options = part(self, "#options", OptionTable)
        if options is not None:
            options.border_title = ui_text(self).get("app.role_model.columns")

    def rows(self) -> list[Row]:
        return model_rows(self.prompt.options, ui_text(self))


class EditScreen(ChoiceScreen):
    """Pick the answer to change. Later answers are dropped but remembered as defaults."""

    def rows(self) -> list[Row]:
        # The history's echo reads better than the raw "step: answer" option label.
        echoes = {e.step_id: e.echo for e in self.view.history}
        return [
            Row(o.value, (echoes.get(o.value) or o.label,), o.disabled_reason)
            for o in self.prompt.options
        ]
