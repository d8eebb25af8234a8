"""The app's prepare and launch: the confirm screen's dry run, prepare in a worker thread,
the trust and relaunch questions, and the messages each step sends back."""

from __future__ import annotations

import dataclasses
import shlex
from pathlib import Path
from typing import Any

from textual import work
from textual.app import App
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from okstra_core.environment import Environment
from okstra_core.errors import OkstraError
from okstra_core.request import RunRequest
from okstra_core.session import Wizard
from okstra_core.trust import trust_project, verdict
from okstra_core.vocabulary import LEAD_ACCESS, LEAD_ASK, LeadAccess
from okstra_core.wizard.text import WizardText

from .messages import (
    LaunchRequest,
    PreflightChecked,
    PrepareFailed,
    PrepareFinished,
    PrepareRequested,
    PrepareStep,
)
from .ready_lines import ReadyLines
from .screens.dialog import RelaunchScreen, TrustScreen
from .screens.launch import LaunchScreen


class PreparingApp(App[LaunchRequest | None]):
    """The prepare-and-launch half of the okstra app (see `OkstraApp`)."""

    project_root: Path
    launch: str
    environment: Environment
    text: WizardText
    wizard: Wizard | None
    ready_lines: ReadyLines
    # After a launch in tmux: what to print when the app exits (attach, resume).
    launched_run: str | None = None
    # What the lead's CLI may do without asking (the confirm screen's `x`).
    lead_access: LeadAccess = LEAD_ASK

    @property
    def shown(self) -> Screen[Any] | None:
        """The screen on top — None while the app closes (`App.screen` would raise)."""
        stack = self.screen_stack
        return stack[-1] if stack else None

    def check_preflight(self, screen: Screen[Any]) -> None:
        """Start the confirm screen's dry-run prepare (preflight) in a worker."""
        assert self.wizard is not None
        try:
            request = self.wizard.preview_outcome().request
        except OkstraError as exc:
            screen.post_message(PreflightChecked(error=exc.render()))
            return
        if self.lead_access != LEAD_ASK:
            request = dataclasses.replace(request, lead_access=self.lead_access)
        self.run_dry_prepare(screen, request)

    def next_lead_access(self, screen: Screen[Any]) -> None:
        """The confirm screen's `x`: the lead's next access (ask → edits → full → ask),
        planned again by the dry run."""
        levels = list(LEAD_ACCESS)
        self.lead_access = levels[(levels.index(self.lead_access) + 1) % len(levels)]
        self.check_preflight(screen)

    @work(thread=True, exclusive=True, exit_on_error=False, group="preflight")
    def run_dry_prepare(self, screen: Screen[Any], request: RunRequest) -> None:
        """Dry-run prepare: validates the request and runs preflight, writes nothing."""
        from okstra_core.prepare import prepare

        try:
            result = prepare(
                request, launch=self.launch, dry_run=True, environment=self.environment
            )
        except OkstraError as exc:
            screen.post_message(PreflightChecked(error=exc.render()))
            return
        screen.post_message(PreflightChecked(result.preflight, tuple(result.notes), plan=result))

    def on_prepare_requested(self, message: PrepareRequested) -> None:
        screen = self.shown
        if self.wizard is not None and isinstance(screen, LaunchScreen):
            self.start_prepare(screen)

    def _earlier_run(self) -> tuple[str, Path] | None:
        """The run this setup launched before: what to say about it, and its directory
        (looking at its lead records the lead's exit)."""
        from okstra_core.life.lead import observe, read_run
        from okstra_core.setup_runs import setup_runs

        assert self.wizard is not None
        earlier = setup_runs(self.wizard.path)
        if not earlier:
            return None
        run_dir = Path(str(earlier[-1].get("runDir")))
        try:
            run = read_run(run_dir)
            status = observe(run, self.environment).label()
        except OkstraError as exc:
            said = self.text.get("app.relaunch.unreadable", run_dir=run_dir, error=exc.render())
            return said, run_dir
        said = self.text.get(
            "app.relaunch.earlier", run_id=run.run_id, status=status, run=str(run.run_dir)
        )
        return said, run.run_dir

    def start_prepare(self, screen: LaunchScreen) -> None:
        """Prepare the open setup, asking first in a project not trusted yet (a yes is
        recorded), then when the setup already launched a run."""
        assert self.wizard is not None
        project = Path(self.wizard.state.project_root)
        try:
            trusted = self.launch == "none" or verdict(project, self.environment.env).trusted
        except OkstraError as exc:
            screen.post_message(PrepareFailed(exc.render()))
            return
        if trusted:
            self._start_trusted(screen)
            return

        def answered(yes: bool | None) -> None:
            if not yes:
                said = self.text.get("app.trust.declined", project=shlex.quote(str(project)))
                screen.post_message(PrepareFailed(said))
                return
            try:
                trust_project(project, self.environment.env)
            except OkstraError as exc:
                screen.post_message(PrepareFailed(exc.render()))
                return
            self._start_trusted(screen)

        self.push_screen(TrustScreen(project), answered)

    def _start_trusted(self, screen: LaunchScreen) -> None:
        from okstra_core.setup_runs import setup_runs

        assert self.wizard is not None
        path = self.wizard.path
        earlier = setup_runs(path)
        if not earlier:
            self.run_prepare(screen, path)
            return
        run_id, run_dir = str(earlier[-1].get("runId")), Path(str(earlier[-1].get("runDir")))

        def answered(again: bool | None) -> None:
            screen.set_waiting(not again)
            if again:
                self.run_prepare(screen, path, again=True)

        self.push_screen(RelaunchScreen(screen.title_text, run_id, run_dir), answered)

    @work(thread=True, exclusive=True, exit_on_error=False, group="prepare")
    def run_prepare(self, screen: LaunchScreen, state_path: Path, *, again: bool = False) -> None:
        """Prepare (and launch) in a thread; each step comes back as a message."""
        from okstra_core.frontend import prepare_setup

        def on_step(step: str) -> None:
            screen.post_message(PrepareStep(step))

        try:
            result = prepare_setup(
                state_path,
                launch=self.launch,
                environment=self.environment,
                on_step=on_step,
                again=again,
                lead_access=None if self.lead_access == LEAD_ASK else self.lead_access,
            )
        except OkstraError as exc:
            screen.post_message(PrepareFailed(exc.render()))
            return
        screen.post_message(PrepareFinished(result))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # exit_on_error=False keeps the app alive: show what broke.
        screen = self.shown
        if event.state != WorkerState.ERROR or screen is None:
            return
        error = event.worker.error
        text = self.text.get("app.internal_error", kind=type(error).__name__, error=error)
        failed = event.worker.group == "prepare"
        screen.post_message(PrepareFailed(text) if failed else PreflightChecked(error=text))

    def on_prepare_failed(self, message: PrepareFailed) -> None:
        # The launch screen has shown the error (the message bubbles up from it).
        if self.shown is not None:
            self.ready_lines.after_refresh(self.shown, outcome="failed")

    def on_prepare_finished(self, message: PrepareFinished) -> None:
        if self.shown is not None:
            self.ready_lines.after_refresh(self.shown, outcome="prepared")
        result = message.result
        launch = result.launch
        if result.ok and launch is not None and launch.window_ref and not result.exec_argv:
            # Said on stdout once the app has exited: how to see and resume it.
            self.launched_run = self.text.get(
                "app.quit.launched",
                run_id=result.run_id,
                window=launch.window_ref,
                run=str(result.run_dir),
            )
        if result.exec_argv:
            cwd = Path(launch.cwd if launch is not None else self.project_root)
            argv = tuple(result.exec_argv)
            self.exit(LaunchRequest(argv, cwd, result.exec_env, run_dir=result.run_dir))
