"""The doctor dialog (`okstra doctor` in the app): each agent CLI and tmux, with warnings
and fixes; the checks run the CLIs in a worker thread."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer

from okstra_core.errors import OkstraError

from ..resources import stylesheet, ui_text
from ..widgets import Plain
from .dialog import close, part

if TYPE_CHECKING:
    from okstra_core.environment import Environment


class DoctorScreen(ModalScreen[None]):
    """`okstra doctor` inside the app."""

    CSS_PATH = stylesheet("doctor")
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
