"""The okstra terminal app and `make_app()`, its one factory (CLI, tests, snapshots).

The only part of okstra_tui that talks to okstra_core: it shows the screen for the wizard
engine's current prompt and submits what the person chose. Every rule is the engine's.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, ClassVar, Literal

from textual import events
from textual.app import SystemCommand
from textual.binding import BindingType
from textual.notifications import SeverityLevel
from textual.screen import ModalScreen, Screen

from okstra_core.discovery import default_project_root
from okstra_core.display import inert
from okstra_core.environment import Environment
from okstra_core.errors import AnswerRefused, OkstraError
from okstra_core.session import (
    Wizard,
    delete_wizard,
    list_wizards,
    new_state_path,
    resolve_state_path,
)
from okstra_core.wizard import Prompt
from okstra_core.wizard.text import WizardText, text_for

from . import _textual_fixes
from ._preload_css import preload
from .messages import (
    Answered,
    BackRequested,
    DefaultsRequested,
    DeleteRequested,
    EditRequested,
    LaunchRequest,
    OpenRunRequested,
    RewindRequested,
    WizardChosen,
)
from .preparing import PreparingApp
from .ready_lines import ReadyFile, ReadyLines
from .resources import APP_BINDINGS, stylesheets
from .screens import screen_for_prompt
from .screens.base import Armed, GuardedScreen, PromptScreen
from .screens.confirm import ConfirmScreen
from .screens.dialog import KeysHelpScreen
from .screens.doctor import DoctorScreen
from .screens.launch import LaunchScreen
from .screens.runs import RunsScreen
from .screens.start import StartScreen
from .widgets import block, line

# LaunchRequest: what the app returns on exit (defined with the messages).
__all__ = ["LaunchRequest", "OkstraApp", "breakpoint_classes", "make_app"]


def breakpoint_classes(points: Iterable[tuple[int, str]] | None, size: int) -> list[str]:
    """The class Textual's breakpoints give a dimension: the highest threshold <= size."""
    fitting = [(minimum, name) for minimum, name in points or () if size >= minimum]
    return [max(fitting)[1]] if fitting else []


class OkstraApp(PreparingApp, inherit_bindings=False):
    """Guided setup of a team of agents: start → prompts → confirm → launch."""

    TITLE = "okstra"
    # Every screen's stylesheet, parsed once at start.
    CSS_PATH = stylesheets()
    BINDINGS: ClassVar[list[BindingType]] = list(APP_BINDINGS)
    # Narrow terminals get a slimmer history panel (see screens/app.tcss).
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]

    def __init__(
        self,
        *,
        project_root: Path | str | None = None,
        state: Path | str | None = None,
        host: str | None = None,
        entry_mode: str | None = None,
        task_type: str | None = None,
        launch: str = "auto",
        environment: Environment | None = None,
        cursor_blink: bool = True,
    ) -> None:
        """Build the app (for the CLI, the Pilot tests and the snapshot tests).

        Args:
            project_root: the project (default: nearest `.okstra`, else git top, else cwd).
            state: open (or create) this wizard state file directly, skipping the start.
            host: host runtime id for a new wizard (default: detected).
            entry_mode: `spawn-process` or `current-session` for a new wizard.
            task_type: preselect the task type of a new wizard.
            launch: prepare's launch backend: auto, tmux, exec or none.
            environment: the machine seam (clock, PATH, env); tests pass a fixed one.
            cursor_blink: False freezes the text cursor (stable snapshots).

        Raises:
            OkstraError: the installed Textual is not the one `_textual_fixes` was written for.
        """
        _textual_fixes.apply()
        environment = environment or Environment.real()
        if project_root is None:
            project_root = default_project_root(Path.cwd(), environment.env)
        super().__init__()
        preload(self.stylesheet)
        self.environment = environment
        self.project_root = Path(project_root).resolve()
        # Same meaning as the protocol's --state: a bare name lives in the wizards dir.
        self.state_path = None if state is None else resolve_state_path(str(state), environment)
        # A new setup's wizard: with the host, entry mode and task type given here.
        self._new_wizard = functools.partial(
            Wizard.init, host=host, entry_mode=entry_mode, task_type=task_type
        )
        self.launch = launch
        self.text: WizardText = text_for(self.environment)
        self.cursor_blink = cursor_blink
        self.wizard: Wizard | None = None
        self._hold = contextlib.ExitStack()
        self._holding = False  # a wizard is open now (its lock held)
        self._confirmed_here = False
        # The wizard this app created: closed without an answer, it is removed.
        self._created: Wizard | None = None
        # The theme config.json names; a change from it (command palette) is saved.
        self._saved_theme: str | None = None
        self._theme_loaded = False
        # Set on exit when a setup in progress was left: the project to resume it in.
        self.saved_setup: Path | None = None
        self.sub_title = line(self.project_root.name)
        ready_file = ReadyFile.from_env(self.environment.env)
        self.ready_lines = ReadyLines(self, ready_file, lambda: self.wizard)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """A notification shown inert, never read as markup (it quotes data)."""
        super().notify(
            block(message), title=line(title), severity=severity, timeout=timeout, markup=False
        )

    def action_help(self) -> None:
        """The keys of the screen shown now (one help screen at a time)."""
        if not isinstance(self.screen, ModalScreen):  # a help screen is one too
            self.push_screen(KeysHelpScreen(self.screen))

    async def on_event(self, event: events.Event) -> None:
        # A key typed while the app closes has no screen (Textual would raise
        # ScreenStackError); a guarded screen drops keys read before it was armed.
        if isinstance(event, events.Key):
            screen = self.shown
            if screen is None or (
                not event.is_forwarded
                and isinstance(screen, GuardedScreen)
                and not screen.accepts_key(event)
            ):
                event.stop()
                return
        await super().on_event(event)

    def on_mount(self) -> None:
        # What was built to get here lives as long as the app: keep it out of the
        # collector's full passes, which would walk it again at every screen.
        gc.freeze()
        if self.ready_lines.file is not None:
            self.screen_change_signal.subscribe(
                self, self.ready_lines.after_refresh, immediate=True
            )
        self._load_theme()
        if self.state_path is not None:
            self.open_wizard(self.state_path, create=not self.state_path.exists())
        else:
            self.show_start()

    def on_unmount(self) -> None:
        gc.unfreeze()  # collectable again (several apps in one process: tests)
        self.saved_setup = self._resumable_project()
        self._release()
        if self.ready_lines.file is not None:
            self.ready_lines.file.write_exit()

    def _resumable_project(self) -> Path | None:
        """The project of the open wizard if it is saved and unfinished, else None."""
        state = self.wizard.state if self.wizard is not None and self._holding else None
        if state is None or not state.answered or state.confirmed or state.aborted:
            return None
        return Path(state.project_root)

    def _show(self, screen: Screen[Any]) -> None:
        # Textual sets breakpoint classes on the first Resize, after the first layout:
        # set them now, or the history panel scrolls for the wide layout first.
        width, height = self.size
        screen.add_class(
            *breakpoint_classes(self.HORIZONTAL_BREAKPOINTS, width),
            *breakpoint_classes(self.VERTICAL_BREAKPOINTS, height),
        )
        # The stack stays [default, current]: "back" walks the wizard's history.
        if len(self.screen_stack) > 1:
            self.switch_screen(screen)
        else:
            self.push_screen(screen)

    def show_start(self, error: str = "") -> None:
        """The start screen: resumable wizards, newest first, and "New setup"."""
        self._release()
        try:
            summaries = list_wizards(self.environment)
        except OkstraError as exc:
            summaries, error = [], error or exc.render()
        self._show(StartScreen(summaries, error, self.project_root, self.environment))

    def show_prompt(self, prompt: Prompt | None = None, *, guide: bool = True) -> None:
        """Show the screen for the wizard's current prompt (or the launch screen); over a
        blocked first step, the no-CLI guide unless `guide` is False."""
        assert self.wizard is not None
        view = self.wizard.view()
        prompt = prompt if prompt is not None else view.prompt
        if prompt.kind == "done":
            self.finish()
            return
        screen = screen_for_prompt(prompt, view, Path(self.wizard.state.project_root))
        self._show(screen)
        if prompt.step_kind == "confirm":
            self.check_preflight(screen)
        elif prompt.kind == "blocked" and not view.history and guide:
            self._guide_if_no_cli()

    def _guide_if_no_cli(self) -> None:
        """Over a blocked first step: the guide, when no agent CLI that can lead is ready."""
        from okstra_core.life.doctor import diagnose, setup_guide

        from .screens.doctor import DEMO, GuideAnswer, GuideScreen

        try:
            entries = setup_guide(diagnose(self.environment, cwd=self.project_root, fresh=False))
        except OkstraError:
            return  # the blocked screen says what it can
        if entries:
            guide = GuideScreen(entries, self.environment, cwd=self.project_root)

            def done(ready: GuideAnswer) -> None:
                if ready == DEMO:
                    self.watch_the_demo()
                    return
                # After a check (`r`) the first step shows what it found; the guide
                # again only when a CLI became ready and something else still blocks.
                if ready is not None and self.wizard is not None:
                    self.show_prompt(guide=bool(ready))

            self.push_screen(guide, callback=done)

    def watch_the_demo(self) -> None:
        """Leave the app for `okstra demo` (the demo team on a fresh demo project)."""
        script = self.environment.okstra_script()
        argv = (script, "demo") if script else (sys.executable, "-m", "okstra", "demo")
        self.exit(LaunchRequest(argv, self.project_root))

    def open_wizard(self, path: Path, *, create: bool) -> None:
        """Create or open the wizard at `path`, take its lock, and show its prompt."""
        self._release()
        try:
            if create:
                wizard = self._new_wizard(path, self.project_root, environment=self.environment)
            else:
                wizard = Wizard.open(path, environment=self.environment)
            self._hold.enter_context(wizard.hold())
            self._holding = True
        except OkstraError as exc:
            self._release()
            self.show_start(exc.render())
            return
        self.wizard = wizard
        self._created = wizard if create else None
        self._confirmed_here = False
        self.sub_title = line(Path(wizard.state.project_root).name)
        self.show_prompt()

    def _release(self) -> None:
        """Close the open wizard; one this app created and nobody answered is removed
        first, while the lock is still held (`discard_if_unanswered`)."""
        created, self._created = self._created, None
        if created is not None:
            try:
                created.discard_if_unanswered()
            except OkstraError as exc:
                self.notify(exc.render(), severity="error")
        self._hold.close()
        self._hold = contextlib.ExitStack()
        self._holding = False

    def finish(self) -> None:
        """Launch a confirmed wizard (at once if confirmed just now, else after Enter:
        it may have been prepared already); an aborted one returns to start."""
        assert self.wizard is not None
        try:
            self.wizard.outcome()
        except OkstraError as exc:
            self.show_start(exc.render())
            return
        earlier = None if self._confirmed_here else self._earlier_run()
        waiting = not self._confirmed_here
        screen = LaunchScreen(self.wizard.state, self.wizard.source, waiting, earlier)
        self._show(screen)
        if self._confirmed_here:
            self.start_prepare(screen)

    def on_open_run_requested(self, message: OpenRunRequested) -> None:
        """The default action on a launched setup: its run, with status and actions."""
        self.show_runs(message.run_dir)

    def _apply(self, action: Callable[[Wizard], Prompt]) -> None:
        """Run one engine call on the open wizard; a refusal shows inline and leaves the
        screen as it was."""
        assert self.wizard is not None
        try:
            prompt = action(self.wizard)
        except OkstraError as exc:
            self._screen_error(exc.message if isinstance(exc, AnswerRefused) else exc.render())
            return
        self.show_prompt(prompt)

    def _screen_error(self, message: str) -> None:
        screen = self.shown
        if screen is None:
            return
        if isinstance(screen, PromptScreen | StartScreen):
            screen.show_error(message)
        else:
            self.notify(message, severity="error")
        self.ready_lines.after_refresh(screen, error=message)

    def _asked(self, step: str) -> bool:
        """Whether `step` is the prompt shown (not one of a screen since replaced)."""
        shown = getattr(self.shown, "prompt", None)
        return shown is not None and shown.id == step

    def on_answered(self, message: Answered) -> None:
        if message.step is not None and not self._asked(message.step):
            return  # a key typed twice: answers a prompt no longer asked
        self._confirmed_here = isinstance(self.shown, ConfirmScreen)
        self._apply(lambda wizard: wizard.submit(message.answer).next)

    def on_armed(self, message: Armed) -> None:
        screen = self.shown
        if isinstance(screen, GuardedScreen) and screen.awaits_key:
            self.ready_lines.after_refresh(screen)

    def on_defaults_requested(self, message: DefaultsRequested) -> None:
        if self._asked(message.step):
            self._apply(Wizard.accept_defaults)

    def on_rewind_requested(self, message: RewindRequested) -> None:
        self._apply(lambda wizard: wizard.rewind(message.step_id))

    def on_back_requested(self, message: BackRequested) -> None:
        self._apply(Wizard.back)

    def on_edit_requested(self, message: EditRequested) -> None:
        # Outside the confirm screen, editing = picking an answer in the history panel.
        if isinstance(self.shown, PromptScreen):
            self.shown.action_history()

    def on_delete_requested(self, message: DeleteRequested) -> None:
        # Confirmed on the start screen; the engine decides what may be deleted.
        try:
            delete_wizard(message.path, self.environment)
        except OkstraError as exc:
            self.show_start(self.text.get("app.delete.failed", error=exc.render()))
            return
        self.show_start()

    def on_wizard_chosen(self, message: WizardChosen) -> None:
        if message.path is None:
            self.open_wizard(new_state_path(self.environment), create=True)
        else:
            self.open_wizard(message.path, create=False)

    def _load_theme(self) -> None:
        """Apply the theme saved in config.json (a bad or unknown one is reported)."""
        from okstra_core.config import load_theme

        try:
            name = load_theme(self.environment)
        except OkstraError as exc:
            self.notify(
                self.text.get("app.theme.not_loaded", error=exc.render()), severity="warning"
            )
            name = None
        if name is not None and name in self.available_themes:
            self.theme = name
        elif name is not None:
            self.notify(self.text.get("app.theme.unknown", name=name), severity="warning")
        self._saved_theme = name
        self._theme_loaded = True

    def watch_theme(self, theme: str) -> None:
        # Only a change made in the app is saved: not the load, nor App.__init__'s
        # default (set before this class's attributes exist, hence getattr).
        if not getattr(self, "_theme_loaded", False) or theme == (self._saved_theme or ""):
            return
        from okstra_core.config import save_theme

        try:
            save_theme(theme, self.environment)
        except OkstraError as exc:
            self.notify(self.text.get("app.theme.not_saved", error=exc.render()), severity="error")
            return
        self._saved_theme = theme

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        commands: list[tuple[str, Callable[[], object]]] = []
        if isinstance(screen, PromptScreen):
            commands = [("app.commands.back", screen.action_back)]
            commands.append(("app.commands.edit", screen.action_edit))
        commands += [
            ("app.commands.start", self.show_start),
            ("app.runs.command", self.show_runs),
            ("app.doctor.command", self.show_doctor),
        ]
        for key, run in commands:
            yield SystemCommand(self.text.get(key), self.text.get(f"{key}_help"), run)
        yield from super().get_system_commands(screen)

    def show_runs(self, select: Path | None = None) -> None:
        """The runs of this project (every project's when it has no `.okstra` yet), the
        cursor on the run `select`."""
        root = self._project_or_say()
        if root is not False:
            self.push_screen(RunsScreen(root, self.environment, select=select))

    def _project_or_say(self) -> Path | Literal[False] | None:
        """This directory's project (None: none); False, said, when it is refused."""
        from okstra_core.life.runs import find_project_root

        try:
            return find_project_root(self.project_root, self.environment.env)
        except OkstraError as exc:
            self.notify(inert(exc.render()), severity="error", markup=False)
            return False

    def show_doctor(self) -> None:
        self.push_screen(DoctorScreen(self.environment, cwd=self.project_root))


# The one factory of the app (the CLI, the tests, the benchmarks).
make_app = OkstraApp
