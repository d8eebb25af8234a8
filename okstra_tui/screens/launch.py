"""The launch screen: prepare's steps as they run (messages from the app's worker), then
the hand-over: the terminal to the lead CLI, its tmux window, or the command to run."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Header, ProgressBar

from okstra_core.wizard.text import WizardText

from ..messages import (
    BackRequested,
    OpenRunRequested,
    PrepareFailed,
    PrepareFinished,
    PrepareRequested,
    PrepareStep,
)
from ..resources import ui_text
from ..widgets import KeysFooter, Plain
from ..widgets.confirmation import argv_text, shown_path
from .base import GuardedScreen
from .dialog import gone, part

if TYPE_CHECKING:
    from okstra_core.prepare import PrepareResult
    from okstra_core.wizard.state import WizardState


def result_text(
    result: PrepareResult,
    root: Path,
    which: Callable[[str], str | None] | None = None,
    *,
    catalog: WizardText,
) -> Text:
    """What prepare did and what to run next (the sentences come from `catalog`)."""

    def line(key: str, **values: object) -> str:
        return catalog.get(f"app.launch.{key}", **values) + "\n"

    text = Text()
    text.append(catalog.get("app.launch.prepared", run_id=result.run_id), style="bold")
    text.append(line("prepared_in", path=shown_path(result.run_dir, root)))
    launch = result.launch
    if result.entry_mode == "current-session":
        text.append(line("current_session"))
        text.append(f"  {shown_path(result.lead_prompt_path, root)}\n")
    elif result.exec_argv:
        text.append(line("handing_over"))
        text.append(f"  {argv_text(result.exec_argv[:1])} …\n")
    elif launch is not None and launch.lead_exit is not None:
        lead_exit = launch.lead_exit
        text.append(
            line("lead_exited", headline=lead_exit.headline(), window=launch.window_ref or "?"),
            style="bold red",
        )
        for said in lead_exit.last_lines[-8:]:
            text.append(f"  │ {said}\n")
        text.append(line("lead_exited_hint", run_id=result.run_id))
    elif launch is not None and launch.error is None and launch.window_ref:
        text.append(line("tmux_window", window=launch.window_ref))
    elif result.lead_argv:
        text.append(line("nothing_launched"))
        text.append(f"  cd {shlex.quote(str(root))} && {argv_text(result.lead_argv, which)}\n")
    if launch is not None and launch.error is not None:
        text.append(line("failed", error=launch.error.render()), style="bold red")
        text.append(line("stays_prepared"))
    if launch is not None and launch.pending_discovery:
        text.append(line("pending_discovery"))
    if result.resume_argv:
        text.append(line("resume_later"))
        text.append(f"  {argv_text(result.resume_argv, which)}\n")
    for note in result.notes:
        text.append(f"! {note}\n", style="italic")
    text.rstrip()
    return text


class LaunchScreen(GuardedScreen, Screen[None]):
    """Prepare's progress and outcome for one confirmed wizard: its `state`, saved at
    `state_path` (named in the "try again" advice); paths show relative to its project.
    `waiting`: confirmed in an earlier session, wait for Enter (or Escape, back);
    `earlier`: what became of the run this setup launched before (shown first) and that
    run's directory (Enter opens it, `l` launches another run)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open_run", "Open the run"),
        Binding("enter", "start", "Prepare & launch"),
        Binding("l", "launch_another", "Launch another run"),
        Binding("escape", "back", "Back"),
    ]

    def __init__(
        self, state: WizardState, state_path: Path, waiting: bool, earlier: tuple[str, Path] | None
    ) -> None:
        super().__init__()
        self.earlier: str | None = earlier[0] if earlier else None
        self.earlier_run: Path | None = earlier[1] if earlier else None
        self.state_path = state_path
        self.title_text = f"{state.task_key} · {state.task_type}"
        self.root = Path(state.project_root)
        self.waiting = waiting
        self.steps: list[str] = []
        self.finished = False
        self.failed = False
        # The run whose lead exited while its start was watched: Enter opens it.
        self.exited_run: Path | None = None

    @property
    def awaits_key(self) -> bool:
        return self.waiting

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Enter and Escape act only before prepare has started, once the screen is armed.
        if action == "open_run" and self.exited_run is not None:
            return True
        if action in ("start", "back", "open_run", "launch_another"):
            if not self.waiting:
                return False
            launched = self.earlier_run is not None
            if (action == "start" and launched) or (
                action in ("open_run", "launch_another") and not launched
            ):
                return False
            return True if self.armed else None
        return True

    def action_start(self) -> None:
        if self.waiting and self.armed:
            self.set_waiting(False)
            self.post_message(PrepareRequested())

    def action_launch_another(self) -> None:
        # The app asks first; "preparing" shows only once the answer is yes.
        if self.waiting and self.armed and self.earlier_run is not None:
            self.post_message(PrepareRequested())

    def set_waiting(self, waiting: bool) -> None:
        """False: prepare has started (the progress bar, no more Enter or Escape); True:
        back to waiting for a key (another run of a launched setup was declined)."""
        self.waiting = waiting
        if gone(self):
            return
        self.query_one("#busy").display = not waiting
        self.query_one("#title", Plain).update(self._title())
        self.refresh_bindings()

    def _title(self) -> str:
        if not self.waiting:
            key = "app.launch.preparing"
        else:
            key = "app.launch.launched" if self.earlier_run is not None else "app.launch.waiting"
        return ui_text(self).get(key, title=self.title_text)

    def action_open_run(self) -> None:
        if self.exited_run is not None:
            self.post_message(OpenRunRequested(self.exited_run))
        elif self.waiting and self.armed and self.earlier_run is not None:
            self.post_message(OpenRunRequested(self.earlier_run))

    def action_back(self) -> None:
        self.post_message(BackRequested())

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="launch"):
            yield Plain(self._title(), id="title")
            busy = ProgressBar(total=None, show_eta=False, show_percentage=False, id="busy")
            busy.display = not self.waiting
            yield busy
            with VerticalScroll(id="log"):
                if self.earlier:
                    yield Plain(self.earlier, id="earlier")
                yield Plain("", id="steps")
                yield Plain("", id="result")
                yield Plain("", id="error")
        yield KeysFooter()

    def _render_steps(self) -> None:
        # A step is posted as it starts: every earlier step is done.
        if gone(self):
            return  # prepare's messages still arrive after the screen was replaced
        text = Text()
        last = len(self.steps) - 1
        for i, step in enumerate(self.steps):
            text.append("\n" if i else "")
            if i == last and not self.finished:
                text.append("… ", style="bold yellow")
            elif i == last and self.failed:
                text.append("✗ ", style="bold red")
            else:
                text.append("✓ ", style="bold green")
            text.append(step)
        self.query_one("#steps", Plain).update(text)

    def _done(self) -> None:
        self.finished = True
        if not gone(self):
            self.query_one("#busy").display = False
        self._render_steps()

    def on_prepare_step(self, message: PrepareStep) -> None:
        message.stop()
        self.steps.append(message.step)
        self._render_steps()

    def on_prepare_finished(self, message: PrepareFinished) -> None:
        # Not stopped: the app decides whether to exit and exec the lead CLI.
        self._done()
        result = part(self, "#result", Plain)
        if result is None:
            return
        environment = getattr(self.app, "environment", None)
        which = environment.which if environment is not None else None
        result.update(result_text(message.result, self.root, which, catalog=ui_text(self)))
        result.add_class("-visible")
        if message.result.lead_exited:
            # The lead is gone: this screen is the outcome, with the run one key away.
            self.exited_run = message.result.run_dir
            self.refresh_bindings()

    def on_prepare_failed(self, message: PrepareFailed) -> None:
        # Not stopped: the app signals the outcome (ready file) once this is shown.
        self.failed = True
        self._done()
        error = part(self, "#error", Plain)
        if error is None:
            return
        text = ui_text(self)
        again = (
            text.get("app.launch.again_state", state=shlex.quote(str(self.state_path)))
            if self.state_path
            else text.get("app.launch.again_start")
        )
        error.update(text.get("app.launch.prepare_failed", error=message.error, again=again))
        error.add_class("-visible")
