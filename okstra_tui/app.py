"""The okstra terminal app and `make_app()`, its one factory (CLI, tests, snapshots).

The app is the only part of okstra_tui that talks to okstra_core: it asks the wizard
engine for the current prompt, shows the screen for that prompt's kind, and submits
what the screen says the person chose. Every rule — what comes next, what is valid,
what a rewind drops — is the engine's.
"""

from __future__ import annotations

import contextlib
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
from .keys import APP_BINDINGS
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
from .ready import ReadyFile
from .ready_lines import ReadyLines
from .resources import stylesheets
from .screens import (
    screen_for_prompt,
)
from .screens.base import PromptScreen
from .screens.confirm import ConfirmScreen
from .screens.doctor import DoctorScreen
from .screens.guard import Armed, GuardedScreen
from .screens.keys_help import KeysHelpScreen
from .screens.launch import LaunchScreen
from .screens.runs import RunsScreen
from .screens.stale import part
from .screens.start import StartScreen
from .widgets import (
    HistoryPanel,
    block,
    line,
)

# LaunchRequest: what the app returns on exit (defined with the messages).
__all__ = ["LaunchRequest", "OkstraApp", "breakpoint_classes", "make_app"]


def breakpoint_classes(points: Iterable[tuple[int, str]] | None, size: int) -> list[str]:
    """The class Textual's breakpoints give a dimension: the highest threshold <= size."""
    fitting = [(minimum, name) for minimum, name in points or () if size >= minimum]
    return [max(fitting)[1]] if fitting else []


class OkstraApp(PreparingApp, inherit_bindings=False):
    """Guided setup of a team of agents: start → prompts → confirm → launch."""

    TITLE = "okstra"
    # Every screen's stylesheet, parsed once at start (a screen's own CSS_PATH then
    # finds its file already read).
    CSS_PATH = stylesheets()
    # The app's keys (`keys.APP_BINDINGS`): `q` quits where it cannot be typed, Ctrl+Q
    # everywhere (the footer shows it where `q` is typed); `?` (F1) is help everywhere.
    BINDINGS: ClassVar[list[BindingType]] = list(APP_BINDINGS)
    # Narrow terminals get a slimmer history panel (see screens/app.tcss).
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]

    def __init__(
        self,
        *,
        project_root: Path,
        state: Path | None = None,
        host: str | None = None,
        entry_mode: str | None = None,
        task_type: str | None = None,
        launch: str = "auto",
        environment: Environment | None = None,
        cursor_blink: bool = True,
    ) -> None:
        super().__init__()
        # Every screen's and widget's default CSS, parsed with the rest (_preload_css.py).
        preload(self.stylesheet)
        self.project_root = Path(project_root).resolve()
        self.state_path = state
        self.host = host
        self.entry_mode = entry_mode
        self.task_type = task_type
        self.launch = launch
        self.environment = environment or Environment.real()
        # Every string the app shows comes from the wizard's text catalog.
        self.text: WizardText = text_for(self.environment)
        self.cursor_blink = cursor_blink
        self.wizard: Wizard | None = None
        self._hold = contextlib.ExitStack()
        self._holding = False  # a wizard is open now (its lock held)
        self._confirmed_here = False
        # The wizard this app created (New setup, or --state of a new file): closed
        # without an answer, it is removed rather than left as an empty entry.
        self._created: Wizard | None = None
        # The theme config.json names; a change from it (command palette) is saved.
        self._saved_theme: str | None = None
        self._theme_loaded = False
        # Set on exit when a setup in progress was left: the project to resume it in
        # (entry.py says so after the terminal is restored).
        self.saved_setup: Path | None = None
        # Shown in the header: a directory name is data (inert, never markup).
        self.sub_title = line(self.project_root.name)
        # OKSTRA_READY_FILE: a line each time the app is ready for keys (see ready.py).
        self.ready_lines = ReadyLines(
            self,
            ReadyFile.from_env(self.environment.env),
            wizard=lambda: self.wizard,
            text=self.text,
        )

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """A notification, never read as markup: what okstra says quotes data (an error
        names a file, a value of a state file) and is shown inert."""
        super().notify(
            block(message), title=line(title), severity=severity, timeout=timeout, markup=False
        )

    # -- keys ------------------------------------------------------------------------

    def action_help(self) -> None:
        """The keys of the screen shown now (a help screen; one at a time)."""
        if isinstance(self.screen, KeysHelpScreen | ModalScreen):
            return
        self.push_screen(KeysHelpScreen(self.screen))

    async def on_event(self, event: events.Event) -> None:
        # A guarded screen (confirm, launch) acts only on keys read after it was shown
        # and armed: anything typed ahead is dropped here, before any binding sees it.
        screen = self.shown if isinstance(event, events.Key) else None
        if isinstance(event, events.Key) and screen is None:
            # Typed while the app closes: no screen is left to take it (Textual's
            # binding check would raise ScreenStackError).
            event.stop()
            return
        if (
            isinstance(event, events.Key)
            and not event.is_forwarded
            and isinstance(screen, GuardedScreen)
            and not screen.accepts_key(event)
        ):
            event.stop()
            return
        await super().on_event(event)

    # -- screens ---------------------------------------------------------------------

    def on_mount(self) -> None:
        # What was built to get here (imports, catalog, text, wizard) lives as long as
        # the app: keep it out of the collector's full passes, which otherwise walk it
        # again and again while screens are built and dropped (see on_unmount).
        gc.freeze()
        if self.ready_lines.file is not None:
            self.screen_change_signal.subscribe(self, self._ready_after_refresh, immediate=True)
        self._load_theme()
        if self.state_path is not None:
            self.open_wizard(self.state_path, create=not self.state_path.exists())
        else:
            self.show_start()

    def on_unmount(self) -> None:
        gc.unfreeze()  # collectable again (several apps in one process: tests)
        # Quit (q, ctrl+q) or the lead taking over: close the wizard like any other way.
        self.saved_setup = self._resumable_project()
        self._release()
        if self.ready_lines.file is not None:
            self.ready_lines.file.write_exit()

    def _resumable_project(self) -> Path | None:
        """The project of the open wizard if it is saved and unfinished, else None."""
        wizard = self.wizard
        if wizard is None or not self._holding:
            return None
        state = wizard.state
        if not state.answered or state.confirmed or state.aborted:
            return None
        return Path(state.project_root)

    def _show(self, screen: Screen[Any]) -> None:
        # Textual gives a new screen its breakpoint classes on its first Resize, after
        # its first layout: set them now. Otherwise each switch below 100 columns first
        # paints the wide layout, and the history panel scrolls to its newest answer
        # for that layout — leaving it below the fold once the panel narrows.
        width, height = self.size
        screen.add_class(
            *breakpoint_classes(self.HORIZONTAL_BREAKPOINTS, width),
            *breakpoint_classes(self.VERTICAL_BREAKPOINTS, height),
        )
        # Keep the stack at [default, current]: screens replace each other, the
        # wizard's history (not the screen stack) is what "back" walks.
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
        self._show(
            StartScreen(
                summaries,
                self.environment.now(),
                error,
                project_root=self.project_root,
                environment=self.environment,
            )
        )

    def show_prompt(self, prompt: Prompt | None = None, *, guide: bool = True) -> None:
        """Show the screen for the wizard's current prompt (or the launch screen); over a
        blocked first step, the no-CLI guide unless `guide` is False."""
        assert self.wizard is not None
        # One load of the state for the prompt, history, progress and confirmation
        # (each asked on its own would recompute the prompt again).
        view = self.wizard.view()
        prompt = prompt if prompt is not None else view.prompt
        if prompt.kind == "done":
            self.finish()
            return
        confirm = prompt.step_kind == "confirm"
        screen = screen_for_prompt(
            prompt,
            view.history,
            view.progress,
            project_root=Path(self.wizard.state.project_root),
            confirmation=view.confirmation if confirm else None,
        )
        self._show(screen)
        if confirm:
            self.check_preflight(screen)
        elif prompt.kind == "blocked" and not view.history and guide:
            self._guide_if_no_cli()

    def _guide_if_no_cli(self) -> None:
        """Over a blocked first step: the guide, when no agent CLI that can lead is
        ready (the one readiness verdict: the wizard's model lists computed it just now,
        so its record answers)."""
        from okstra_core.life.doctor import diagnose, setup_guide

        from .screens.guide import DEMO, GuideAnswer, GuideScreen

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
                # After a check (`r`) the first step is shown again with what it found
                # (its options' reasons are the check's); the guide again only when a
                # CLI became ready and something else still blocks.
                if ready is not None and self.wizard is not None:
                    self.show_prompt(guide=bool(ready))

            self.push_screen(guide, callback=done)

    def watch_the_demo(self) -> None:
        """Leave the app for `okstra demo`: the demo team at work on a fresh copy of
        the demo project."""
        script = self.environment.okstra_script()
        argv = (script, "demo") if script else (sys.executable, "-m", "okstra", "demo")
        self.exit(LaunchRequest(argv, self.project_root))

    # -- wizard lifecycle -------------------------------------------------------------

    def open_wizard(self, path: Path, *, create: bool) -> None:
        """Create or open the wizard at `path`, take its lock, and show its prompt."""
        self._release()
        try:
            if create:
                wizard = Wizard.init(
                    path,
                    self.project_root,
                    host=self.host,
                    entry_mode=self.entry_mode,
                    task_type=self.task_type,
                    environment=self.environment,
                )
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
        """Close the open wizard (quit, start screen, another wizard).

        A wizard this app created and nobody answered is removed first, while the lock
        is still held (the rule is the engine's: `discard_if_unanswered`).
        """
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
        """A finished wizard: launch a confirmed one; an aborted one returns to start.

        A wizard confirmed just now starts prepare at once; one confirmed in an
        earlier session waits for Enter (it may have been prepared already).
        """
        assert self.wizard is not None
        try:
            self.wizard.outcome()
        except OkstraError as exc:
            self.show_start(exc.render())
            return
        state = self.wizard.state
        earlier = None if self._confirmed_here else self._earlier_run()
        screen = LaunchScreen(
            f"{state.task_key} · {state.task_type}",
            Path(state.project_root),
            state_path=self.wizard.source,
            environment=self.environment,
            waiting=not self._confirmed_here,
            earlier=earlier[0] if earlier else None,
            earlier_run=earlier[1] if earlier else None,
        )
        self._show(screen)
        if self._confirmed_here:
            self.start_prepare(screen)

    def on_open_run_requested(self, message: OpenRunRequested) -> None:
        """The default action on a launched setup: its run, with status and actions."""
        root = self._project_or_say()
        if root is not False:
            self.push_screen(RunsScreen(root, self.environment, select=message.run_dir))

    # -- messages from the screens ----------------------------------------------------

    def _apply(self, action: Callable[[], Prompt]) -> None:
        """Run one engine call; a refusal shows inline and leaves the screen as it was."""
        try:
            prompt = action()
        except AnswerRefused as exc:
            self._screen_error(exc.message)
            return
        except OkstraError as exc:
            self._screen_error(exc.render())
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
        self._ready_after_refresh(screen, error=message)

    def on_answered(self, message: Answered) -> None:
        assert self.wizard is not None
        shown = getattr(self.shown, "prompt", None)
        if message.step is not None and (shown is None or shown.id != message.step):
            # Sent by a screen that has been replaced meanwhile (a key typed twice):
            # it answers a prompt that is no longer asked.
            return
        wizard = self.wizard
        self._confirmed_here = isinstance(self.shown, ConfirmScreen)
        self._apply(lambda: wizard.submit(message.answer).next)

    def on_armed(self, message: Armed) -> None:
        # A guarded screen waiting for a key takes keys from now on: it is ready now.
        screen = self.shown
        if isinstance(screen, GuardedScreen) and screen.awaits_key:
            self._ready_after_refresh(screen)

    def on_defaults_requested(self, message: DefaultsRequested) -> None:
        assert self.wizard is not None
        wizard = self.wizard
        shown = getattr(self.shown, "prompt", None)
        if shown is None or shown.id != message.step:
            return  # typed ahead of a screen that has been replaced

        self._apply(wizard.accept_defaults)

    def on_rewind_requested(self, message: RewindRequested) -> None:
        assert self.wizard is not None
        wizard = self.wizard
        self._apply(lambda: wizard.rewind(message.step_id))

    def on_back_requested(self, message: BackRequested) -> None:
        assert self.wizard is not None
        self._apply(self.wizard.back)

    def on_edit_requested(self, message: EditRequested) -> None:
        # Outside the confirm screen, editing = picking an answer in the history panel.
        screen = self.shown
        panel = part(screen, "#history", HistoryPanel) if screen is not None else None
        if panel is not None:
            panel.enter()

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

    # -- theme ------------------------------------------------------------------------

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
        # Only a change made in the app is saved: not the load above, nor the default
        # App.__init__ sets before this class's attributes exist (hence getattr).
        if not getattr(self, "_theme_loaded", False) or theme == (self._saved_theme or ""):
            return
        from okstra_core.config import save_theme

        try:
            save_theme(theme, self.environment)
        except OkstraError as exc:
            self.notify(self.text.get("app.theme.not_saved", error=exc.render()), severity="error")
            return
        self._saved_theme = theme

    # -- command palette --------------------------------------------------------------

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        text = self.text
        if isinstance(screen, PromptScreen):
            yield SystemCommand(
                text.get("app.commands.back"),
                text.get("app.commands.back_help"),
                screen.action_back,
            )
            yield SystemCommand(
                text.get("app.commands.edit"),
                text.get("app.commands.edit_help"),
                screen.action_edit,
            )
        yield SystemCommand(
            text.get("app.commands.start"), text.get("app.commands.start_help"), self.show_start
        )
        yield SystemCommand(
            text.get("app.runs.command"), text.get("app.runs.command_help"), self.show_runs
        )
        yield SystemCommand(
            text.get("app.doctor.command"), text.get("app.doctor.command_help"), self.show_doctor
        )
        yield from super().get_system_commands(screen)

    def show_runs(self) -> None:
        """The runs of this project (every project's when it has no `.okstra` yet)."""
        root = self._project_or_say()
        if root is not False:
            self.push_screen(RunsScreen(root, self.environment))

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


def make_app(
    *,
    project_root: Path | str | None = None,
    state: Path | str | None = None,
    host: str | None = None,
    entry_mode: str | None = None,
    task_type: str | None = None,
    launch: str = "auto",
    environment: Environment | None = None,
    cursor_blink: bool = True,
) -> OkstraApp:
    """Build the app. The CLI, the Pilot tests and the snapshot tests all come here.

    Args:
        project_root: the project the setup is for (default: the nearest directory
            holding `.okstra`, else the git top level, else the current directory).
        state: open (or create) this wizard state file directly, skipping the start.
        host: host runtime id for a new wizard (default: detected).
        entry_mode: `spawn-process` or `current-session` for a new wizard.
        task_type: preselect the task type of a new wizard.
        launch: prepare's launch backend: auto, tmux, exec or none.
        environment: the machine seam (clock, PATH, env); tests pass a fixed one.
        cursor_blink: False freezes the text cursor (stable snapshots).

    Raises:
        OkstraError: the installed Textual is not the one okstra's fixes were written
            for (see `okstra_tui/_textual_fixes.py`).
    """
    # The quarantined fixes for the pinned Textual (docs/textual-fixes.md); refused on
    # another Textual version.
    _textual_fixes.apply()
    environment = environment or Environment.real()
    return OkstraApp(
        project_root=Path(project_root)
        if project_root is not None
        else default_project_root(Path.cwd(), environment.env),
        # Same meaning as the protocol's --state: a bare name lives in the wizards dir.
        state=resolve_state_path(str(state), environment) if state is not None else None,
        host=host,
        entry_mode=entry_mode,
        task_type=task_type,
        launch=launch,
        environment=environment,
        cursor_blink=cursor_blink,
    )
