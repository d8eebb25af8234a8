"""The dialogs over a screen: yes/no questions (answers True or False; No has the
focus: delete, discard, trust, relaunch, …), a written follow-up for a worker, and the
keys of the screen below.

A stray Enter keeps things as they are: yes is `y` or the Yes button; `n` and Escape
answer no.

Late keys and messages: a dialog closes once, a screen that is going shows nothing.
Keys are handled by the screen on top when they were read, and Textual's `dismiss` (like
`pop_screen`) closes whatever screen is on top *now*: a second `y` sent to a dialog
closed the screens under it (ScreenStackError, InvalidStateError). A dialog therefore
closes only while it is still the active screen (`close`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, TypeVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widget import Widget
from textual.widgets import Button, Footer, Input
from textual.widgets.button import ButtonVariant

from ..resources import key_rows, ui_text
from ..widgets import Plain

if TYPE_CHECKING:
    from okstra_core.wizard.text import WizardText

# How much of the typed text the discard dialog quotes.
_QUOTE = 60


T = TypeVar("T")
W = TypeVar("W", bound=Widget)


def close(screen: Screen[T], result: T | None = None) -> None:
    """Dismiss `screen` with `result` — if it is still the screen on top."""
    if screen.is_active:
        screen.dismiss(result)


def part(screen: Screen[Any], selector: str, kind: type[W]) -> W | None:
    """The widget `selector` of `screen`, or None once the screen is going (a message
    queued before it was replaced arrives while its widgets are being removed)."""
    if gone(screen):
        return None
    return next(screen.query(selector).results(kind), None)


def show_error(screen: Screen[Any], message: str) -> None:
    """Show `message` in the screen's `#error` line (hidden when empty)."""
    error = part(screen, "#error", Plain)
    if error is not None:
        error.update(message)
        error.set_class(bool(message), "-visible")


def gone(screen: Screen[Any]) -> bool:
    """Whether `screen` was replaced or dismissed (its widgets are being removed)."""
    return not screen.is_attached or screen not in screen.app.screen_stack


class Words(NamedTuple):
    """What a dialog says: question, what happens (inert; empty: no line), buttons."""

    question: str
    detail: str
    yes: str
    no: str


def answer_keys(yes: str, no: str) -> list[BindingType]:
    """A dialog's keys, `y` (`yes` in the footer) and `n`/Escape (`no`)."""
    return [Binding("y", "answer(True)", yes), Binding("n,escape", "answer(False)", no)]


def on_yes(screen: Screen[Any], dialog: Screen[bool], then: Callable[[], object]) -> None:
    """Show `dialog` over `screen`; on a yes, `then()`."""

    def answered(yes: bool | None) -> None:
        if yes:
            then()

    screen.app.push_screen(dialog, answered)


class YesNoScreen(ModalScreen[bool]):
    """Base of the yes/no dialogs: a subclass sets `BINDINGS = answer_keys(...)`, `TEXTS`
    (the catalog section of its words, formatted with `values`: `{task}`, `{path}`, …),
    the buttons' ids and the Yes button's look."""

    TEXTS: ClassVar[str] = ""
    YES_ID: ClassVar[str] = "yes"
    NO_ID: ClassVar[str] = "no"
    YES_VARIANT: ClassVar[ButtonVariant] = "error"

    def __init__(self, **values: object) -> None:
        super().__init__()
        self.values = values

    def words(self) -> Words:
        """What the dialog says (read when it is composed)."""
        text = ui_text(self)
        return Words(*(text.get(f"{self.TEXTS}.{part}", **self.values) for part in Words._fields))

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


class AskScreen(YesNoScreen):
    """Ask before doing something that cannot be undone (stop a running lead, abort a
    setup); the buttons say what each answer does ("Stop (y)", "Keep running (n)")."""

    BINDINGS: ClassVar[list[BindingType]] = answer_keys("Yes", "No")

    def __init__(self, words: Words) -> None:
        super().__init__()
        self._words = words

    def words(self) -> Words:
        return self._words


def ask(text: WizardText, key: str, action: str, **values: object) -> AskScreen:
    """The question `<key>_question`, `<key>_detail` (formatted with `values`) and the
    `app.ask.<action>_yes` / `_no` buttons."""
    question, detail = (text.get(f"{key}_{part}", **values) for part in ("question", "detail"))
    yes, no = (text.get(f"app.ask.{action}_{part}") for part in ("yes", "no"))
    return AskScreen(Words(question, detail, yes, no))


class DeleteWizardScreen(YesNoScreen):
    """Ask before the state file at `path` of the setup for `task` is deleted (Keep has
    the focus: deleting needs a deliberate choice)."""

    TEXTS = "app.delete"
    BINDINGS: ClassVar[list[BindingType]] = answer_keys("Delete", "Keep")
    YES_ID = "delete"
    NO_ID = "keep"

    def __init__(self, task: str, path: Path) -> None:
        super().__init__(task=task, path=path)


class DiscardScreen(YesNoScreen):
    """Ask before the `typed` text is dropped by a rewind or Back (Keep has the focus)."""

    TEXTS = "app.discard"
    BINDINGS: ClassVar[list[BindingType]] = answer_keys("Discard", "Keep typing")
    YES_ID = "discard"
    NO_ID = "keep"

    def __init__(self, typed: str) -> None:
        quoted = " ".join(typed.split())
        super().__init__(text=quoted if len(quoted) <= _QUOTE else quoted[: _QUOTE - 1] + "…")


class TrustScreen(YesNoScreen):
    """Ask whether to trust the `project` directory before its first launch in it
    (`okstra_core.trust`): the agent CLIs run the project's own settings, so "Not now"
    has the focus."""

    TEXTS = "app.trust"
    BINDINGS: ClassVar[list[BindingType]] = answer_keys("Trust", "Not now")
    YES_ID = "trust"
    NO_ID = "not-now"
    YES_VARIANT = "warning"

    def __init__(self, project: Path) -> None:
        super().__init__(project=project)


class RelaunchScreen(YesNoScreen):
    """Ask before the setup `task` (key · type), which launched run `run_id` in `run_dir`,
    launches another ("Not now" has the focus: a second run is a decision, never the
    effect of a stray Enter)."""

    TEXTS = "app.relaunch"
    BINDINGS: ClassVar[list[BindingType]] = answer_keys("Launch another", "Not now")
    YES_ID = "again"
    NO_ID = "not-now"
    YES_VARIANT = "warning"

    def __init__(self, task: str, run_id: str, run_dir: Path) -> None:
        super().__init__(task=task, run_id=run_id, run_dir=run_dir)


class SendScreen(ModalScreen[str | None]):
    """Ask for the follow-up to send to the ended worker `who`: one line, Enter sends,
    Escape cancels (None: cancelled, or nothing typed)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, who: str) -> None:
        super().__init__()
        self.who = who

    def compose(self) -> ComposeResult:
        text = ui_text(self)
        with Vertical(id="dialog"):
            yield Plain(text.get("app.team.send_question", who=self.who), id="question")
            yield Plain(text.get("app.team.send_detail", who=self.who), id="detail")
            yield Input(id="follow-up")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#follow-up", Input).focus()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        close(self, event.value if event.value.strip() else None)

    def action_cancel(self) -> None:
        close(self, None)


def keys_text(rows: list[tuple[str, str]]) -> Text:
    """One line per action: its keys, padded (in cells) to one column, and what it does."""
    width = max((Text(keys).cell_len for keys, _ in rows), default=0)
    text = Text()
    for index, (keys, description) in enumerate(rows):
        if index:
            text.append("\n")
        text.append(keys, style="bold")
        text.append(" " * (width - Text(keys).cell_len + 2))
        text.append(description)
    return text


class KeysHelpScreen(ModalScreen[None]):
    """The keys of the `screen` it was opened over (one without a help panel of its own);
    Escape, `q` or `?` closes it."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,question_mark,f1", "close", "Close")]

    def __init__(self, screen: Screen[Any]) -> None:
        super().__init__()
        self.rows = key_rows(screen)

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Plain(ui_text(self).get("app.ask.title_help"), id="title")
            with VerticalScroll(id="body"):
                yield Plain(keys_text(self.rows), id="keys")
        yield Footer()

    def action_close(self) -> None:
        close(self, None)
