"""The doctor dialog (`okstra doctor` in the app): each agent CLI and tmux, with warnings
and fixes; the checks run the CLIs in a worker thread.

And the first setup screen when no agent CLI can lead a run: a short guide. Each CLI
not ready (its providers grouped): missing, logged out or broken, and the one thing to
do. `r` checks again (in a worker) and closes the guide once a CLI that can lead is
ready; `m` leaves for `okstra demo`; Escape closes it over the blocked step.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer

from okstra_core.errors import OkstraError
from okstra_core.wizard.text import WizardText

from ..resources import ui_text
from ..widgets import Plain
from .dialog import close, part

if TYPE_CHECKING:
    from okstra_core.environment import Environment
    from okstra_core.life.doctor import GuideEntry


class DoctorScreen(ModalScreen[None]):
    """`okstra doctor` inside the app."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q", "close", "Close")]

    def __init__(self, environment: Environment, *, cwd: Path | None = None) -> None:
        super().__init__()
        self.environment = environment
        self.cwd = cwd  # a CLI found inside it (or via a relative PATH entry) is flagged

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Plain(ui_text(self).get("app.doctor.checking"), id="summary")
            with VerticalScroll(id="body"):
                yield Plain("", id="report")
        yield Footer()

    def on_mount(self) -> None:
        self.check()

    @work(thread=True, exclusive=True, group="doctor")
    def check(self) -> None:
        from okstra_core.life.doctor import diagnose, render

        try:
            report = diagnose(self.environment, cwd=self.cwd)
            summary, body = report.summary(), render(report)
        except OkstraError as exc:
            summary, body = exc.render(), ""
        self.app.call_from_thread(self._show, summary, body)

    def _show(self, summary: str, body: str) -> None:
        head, report = part(self, "#summary", Plain), part(self, "#report", Plain)
        if head is None or report is None:
            return
        head.update(summary)
        report.update(body)

    def action_close(self) -> None:
        close(self, None)


def guide_text(entries: Sequence[GuideEntry], *, catalog: WizardText) -> Text:
    """One block per CLI: `claude — not installed` and what to do (inert text)."""
    text = Text()
    for n, entry in enumerate(entries):
        if n:
            text.append("\n")
        state = catalog.get(f"app.guide.state.{entry.state.replace(' ', '_')}")
        names = [p for p in entry.providers if p != entry.cli]
        who = f" ({', '.join(names)})" if names else ""
        text.append(f"{entry.cli}{who}", style="bold")
        text.append(f" — {state}")
        if not entry.can_lead:
            text.append(catalog.get("app.guide.cannot_lead"), style="italic")
        text.append("\n")
        todo_key = {"missing": "install", "logged out": "login"}.get(entry.state, "fix")
        text.append(f"  {catalog.get(f'app.guide.{todo_key}')} {entry.todo}\n")
    text.rstrip()
    return text


DEMO = "demo"
GuideAnswer = bool | str | None


class GuideScreen(ModalScreen[GuideAnswer]):
    """What to install or log in to before a team can be set up. Answers True once a CLI
    that can lead is ready, False when closed after a check, `DEMO`, or None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "recheck", "Check again"),
        Binding("m", "demo", "Demo team"),
        Binding("escape", "close", "Close"),
    ]

    def __init__(
        self, entries: Sequence[GuideEntry], environment: Environment, *, cwd: Path | None = None
    ) -> None:
        super().__init__()
        self.entries = tuple(entries)
        self.environment = environment
        self.cwd = cwd
        self.checking = False
        self.rechecked = False

    def compose(self) -> ComposeResult:
        text = ui_text(self)
        with Vertical(id="dialog"):
            yield Plain(text.get("app.guide.title"), id="summary")
            with VerticalScroll(id="body"):
                yield Plain(guide_text(self.entries, catalog=text), id="guide")
            yield Plain(text.get("app.guide.hint"), id="hint")
        yield Footer()

    def action_recheck(self) -> None:
        if self.checking:
            return
        self.checking = True
        self.rechecked = True
        hint = part(self, "#hint", Plain)
        if hint is not None:
            hint.update(ui_text(self).get("app.guide.checking"))
        self.recheck()

    @work(thread=True, exclusive=True, group="guide")
    def recheck(self) -> None:
        from okstra_core.life.doctor import diagnose, setup_guide

        try:
            entries = setup_guide(diagnose(self.environment, cwd=self.cwd, fresh=True))
            error = None
        except OkstraError as exc:
            entries, error = self.entries, exc.render()
        self.app.call_from_thread(self._show, entries, error)

    def _show(self, entries: tuple[GuideEntry, ...], error: str | None) -> None:
        self.checking = False
        if not entries and error is None:
            close(self, True)
            return
        self.entries = entries
        text = ui_text(self)
        guide, hint = part(self, "#guide", Plain), part(self, "#hint", Plain)
        if guide is None or hint is None:
            return
        guide.update(guide_text(entries, catalog=text))
        hint.update(error or text.get("app.guide.still"))

    def action_demo(self) -> None:
        close(self, DEMO)

    def action_close(self) -> None:
        close(self, False if self.rechecked else None)
