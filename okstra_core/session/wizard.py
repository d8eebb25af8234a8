"""The wizard session: one state file and the transactions on it.

`Wizard` owns a state file. Every change (`submit`, `rewind`, `back`, `refresh`) is a
transaction: take the file's advisory lock (fail fast: "state file is in use (pid N)"),
re-read the file, apply the change to a copy, save it atomically, release. A refused
answer or any error saves nothing — the file stays byte-identical. `hold()` keeps the
lock for a long-lived front end (the TUI). Read-only calls (`prompt`, `history`,
`confirmation`, `outcome`, `answers`, `progress`) never take or wait for the lock.

A file of the earlier okstra is converted in memory (`statefile.load`, through
`okstra_core.compat`); progress is saved to its companion file (`Wizard.path`) and the
earlier file is never written.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from ..environment import Environment
from ..errors import AnswerRefused, OkstraError, StateFileError, UsageError
from ..paths import user_dirs
from ..records import dataclass
from ..store import FileLock, atomic_write_bytes, dumps_json, read_bytes
from ..wizard.base import refuse
from ..wizard.confirm import Confirmation, confirmation
from ..wizard.context import StepContext
from ..wizard.engine import (
    ReplayResult,
    advance,
    apply_answer,
    asking_order,
    default_to_accept,
    history,
    progress,
    replay_answers,
)
from ..wizard.flow import back_target, rewind
from ..wizard.group import apply_group, group_prompt, groups_prompts, simulated_progress
from ..wizard.prompt import AnswerEntry, HistoryEntry, Prompt, StepResult
from ..wizard.revalidate import revalidate
from ..wizard.roles import team_blocker
from ..wizard.state import WizardState, remember_state
from .statefile import Loaded, load, new_state, new_state_path, remove_state_file, unanswered

if TYPE_CHECKING:
    from ..wizard.outcome import Outcome

_T = TypeVar("_T")

__all__ = ["Wizard", "WizardView"]


def _outcomes() -> Callable[..., Outcome]:
    """`outcome.build_outcome`, imported when a confirmed setup's outcome is built.

    The module holds the typed run request, which a step that only asks the next
    question never needs.
    """
    from ..wizard import outcome

    return outcome.build_outcome


@dataclass(frozen=True)
class WizardView:
    """What `show` prints, from one load: prompt, confirmation, history, progress."""

    prompt: Prompt
    confirmation: Confirmation
    history: list[HistoryEntry]
    progress: tuple[int, int]


class Wizard:
    """One wizard state file and the operations on it.

    Attributes:
        path: the v2 file this wizard writes (a companion file for a v1 source).
        source: the file that was opened (the v1 file for a legacy wizard).
        legacy: True when opened from a file of the earlier okstra (v1, or its v2 shape).
        notes: what converting that file changed or skipped (empty otherwise).
    """

    def __init__(self, loaded: Loaded, environment: Environment) -> None:
        self.environment = environment
        self.source = loaded.source
        self.path = loaded.path
        self.legacy = loaded.legacy
        self.notes = loaded.notes
        self._state = loaded.state
        self._data = loaded.data
        self._lock: FileLock | None = None
        # The context this process just checked every answer of the state with
        # (`replay_new`): its outcome needs no second check.
        self._checked: StepContext | None = None
        self._last_ctx: StepContext | None = None

    # -- construction -----------------------------------------------------------------

    @classmethod
    def init(
        cls,
        state_path: Path | str | None,
        project_root: Path | str,
        *,
        host: str | None = None,
        entry_mode: str | None = None,
        task_type: str | None = None,
        environment: Environment | None = None,
        available_functions: Sequence[str] = (),
    ) -> Wizard:
        """Create a new wizard state file and return the wizard.

        Args:
            state_path: the file to create (None: a fresh name in the wizards dir).
            project_root: the project directory (must exist).
            host: host runtime id; detected from the environment when None.
            entry_mode: `spawn-process` (default) or `current-session`.
            task_type: when given, the task type is answered up front.
            environment: the environment seam (real by default).
            available_functions: host functions recorded for prepare.

        Raises:
            UsageError: bad project root, host, entry mode or task type, or the state
                file exists already.
        """
        env = environment or Environment.real()
        path = Path(state_path) if state_path is not None else new_state_path(env)
        _ctx, state = new_state(env, project_root, host, entry_mode, task_type, available_functions)
        with FileLock(path):
            if path.exists():
                raise UsageError(
                    "state file already exists: continue it with `okstra wizard step`",
                    path=path,
                )
            wizard = cls(Loaded(path, path, state, legacy=False), env)
            wizard._save(state)
        return wizard

    @classmethod
    def open(cls, state_path: Path | str, *, environment: Environment | None = None) -> Wizard:
        """Open an existing state file (v2, or v1 through its companion).

        Raises:
            StateFileError: unreadable, not UTF-8, invalid JSON, mixed or unknown
                version, or a field of the wrong type (file and field named).
        """
        env = environment or Environment.real()
        return cls(load(Path(state_path), env), env)

    # -- internals --------------------------------------------------------------------

    def _ctx(self, state: WizardState | None = None) -> StepContext:
        ctx = StepContext(self.environment, Path((state or self._state).project_root))
        self._last_ctx = ctx
        return ctx

    def config_notes(self) -> tuple[str, ...]:
        """What reading the model defaults left out (unknown roles and models, each
        naming its file and key), and the one-time note on the earlier global config."""
        ctx = self._last_ctx or self._ctx()
        return ctx.scopes.notes

    def _save(self, state: WizardState) -> None:
        state.revision += 1
        state.updated_at = self.environment.now().isoformat()
        data = dumps_json(state.to_file())
        atomic_write_bytes(self.path, data)
        remember_state(self.path, data, state, user_dirs(self.environment.env).cache)
        self._state = state
        self._data = data

    @contextlib.contextmanager
    def _locked(self) -> Iterator[WizardState]:
        """Hold the lock (unless `hold()` already does) and yield the fresh state."""
        if self._lock is not None:
            yield self._state
            return
        with FileLock(self.path, transient=self.legacy):
            # Another process may have written since we read: start from the disk.
            if self.path.exists() or self.legacy:
                self._reload()
            yield self._state

    def _reload(self) -> None:
        if not self.legacy and self._data is not None:
            data = read_bytes(self.source, what="wizard state file", error=StateFileError)
            if data == self._data:
                return  # the very bytes this state was parsed from: nothing to check again
        loaded = load(self.source, self.environment)
        self.path = loaded.path
        self.notes = loaded.notes
        self._state = loaded.state
        self._data = loaded.data

    def _transaction(self, change: Callable[[StepContext, WizardState], _T]) -> _T:
        with self._locked() as current:
            work = current.copy()
            ctx = self._ctx(work)
            result = change(ctx, work)
            if work != current or not self.path.exists():
                self._save(work)
            return result

    # -- the API ----------------------------------------------------------------------

    @property
    def state(self) -> WizardState:
        """A copy of the current state (as last read or written)."""
        return self._state.copy()

    def _current(self) -> tuple[StepContext, WizardState, Prompt]:
        """The state as the next prompt sees it (stale answers rewound), read-only."""
        work = self._state.copy()
        ctx = self._ctx(work)
        prompt = advance(ctx, work)
        return ctx, work, prompt

    def view(self) -> WizardView:
        """The prompt, confirmation, history and progress of one load (for `show`)."""
        ctx, work, prompt = self._current()
        return WizardView(
            prompt=prompt,
            confirmation=confirmation(ctx, work),
            history=history(ctx, work),
            progress=simulated_progress(ctx, work),
        )

    def prompt(self) -> Prompt:
        """The current prompt (read-only: nothing is saved)."""
        return self._current()[2]

    def refresh(self) -> Prompt:
        """Compute the current prompt and save what that normalised (dropped models).

        When the file is there and the prompt changes nothing in it, nothing is locked
        or written: asking for the current prompt works while another process holds
        the setup, and on a disk okstra may not write to.
        """
        if self._lock is None and self.path.exists():
            work = self._state.copy()
            prompt = advance(self._ctx(work), work)
            if work == self._state:
                return prompt
        return self._transaction(lambda ctx, work: advance(ctx, work))

    def submit(
        self, answer: str, *, step: str | None = None, defaulted: bool = False
    ) -> StepResult:
        """Answer the current prompt.

        Args:
            answer: an option value (pick) or the text (text).
            step: optionally, the step id the answer is for (refused on mismatch).
            defaulted: the answer is the step's default taken by `accept_defaults`
                (recorded as a default, not as the person's choice).

        Raises:
            AnswerRefused: the answer was refused; the state file is unchanged.
            StateInUseError: another process holds the state file.
        """

        def change(ctx: StepContext, work: WizardState) -> StepResult:
            echo, nxt = apply_answer(ctx, work, answer, step, defaulted=defaulted)
            return StepResult(echo=echo, next=nxt)

        return self._transaction(change)

    def accept_defaults(self) -> Prompt:
        """Answer this step and the next ones with their defaults, up to the confirmation.

        Taken are the choice steps a person would otherwise pass with Enter: the task
        type, the role counts and additions, the models, the lead session and the
        directive and related-task gates. A model's default is a default candidate
        (project, global or okstra's) that can be chosen here, or what the person chose
        before a rewind — not the first model that merely happens to be selectable
        (the person chooses that one). Stops at the first step without such a default
        and at the first step of another kind (a text answer, the confirmation); each
        accepted answer is saved as `submit` saves it.

        Raises:
            AnswerRefused: the current step has no default to accept (nothing saved).
        """
        ctx, work, prompt = self._current()
        accepted = 0
        while (default := default_to_accept(prompt, work)) is not None:
            try:
                prompt = self.submit(default, step=prompt.id, defaulted=True).next
            except AnswerRefused:
                if not accepted:
                    raise
                return self.prompt()  # stop here; what was accepted is saved
            work = self.state
            accepted += 1
        if not accepted:
            raise refuse(ctx, "no_default")
        return prompt

    def rewind(self, step_id: str) -> Prompt:
        """Edit & rewind to an answered step; returns the new prompt."""

        def change(ctx: StepContext, work: WizardState) -> Prompt:
            if not work.is_answered(step_id):
                raise refuse(ctx, "not_answered", step=step_id)
            work.stale = None
            rewind(ctx, work, step_id)
            return advance(ctx, work)

        return self._transaction(change)

    def back(self) -> Prompt:
        """Rewind the last answered step."""

        def change(ctx: StepContext, work: WizardState) -> Prompt:
            target = back_target(ctx, work, advance(ctx, work).id)
            if target is None:
                raise refuse(ctx, "nothing_to_undo")
            work.stale = None
            rewind(ctx, work, target)
            return advance(ctx, work)

        return self._transaction(change)

    def replay(self, entries: Iterable[AnswerEntry]) -> ReplayResult:
        """Apply answers in order as `submit` would, stopping at the first refused one.

        An entry for a step that is already answered with the same answer (pre-filled
        by reusing a run, or converted from v1) is skipped. The replay is one
        transaction: the lock is taken once, each answer is applied to a copy of the
        state (a refused one leaves no trace), and the state file is written once at
        the end with every answer applied before the refused one (if any).
        """
        with self._locked() as current:
            work, result = replay_answers(self._ctx(current), current, entries)
            if work != current or not self.path.exists():
                self._save(work)
        return replace(result, next=self.prompt())

    @classmethod
    def replay_new(
        cls,
        state_path: Path | str | None,
        project_root: Path | str,
        entries: Iterable[AnswerEntry],
        *,
        host: str | None = None,
        entry_mode: str | None = None,
        task_type: str | None = None,
        environment: Environment | None = None,
    ) -> tuple[Wizard, ReplayResult]:
        """A new wizard with `entries` replayed, in memory only: nothing is written.

        The arguments are those of `init`; `save_new()` writes the state file. Every
        answer is checked as it is applied (exactly as `submit` checks it), so the
        wizard's `outcome()` is built from this state without checking it again.

        Raises:
            UsageError: as `init` (bad project root, host, entry mode or task type; the
                state file exists already).
        """
        env = environment or Environment.real()
        path = Path(state_path) if state_path is not None else new_state_path(env)
        if path.exists():
            raise UsageError(
                "state file already exists: continue it with `okstra wizard step`", path=path
            )
        ctx, state = new_state(env, project_root, host, entry_mode, task_type, ())
        work, result = replay_answers(ctx, state, entries)
        wizard = cls(Loaded(path, path, work, legacy=False), env)
        wizard._checked = ctx
        return wizard, result

    def save_new(self) -> None:
        """Write the state file of a wizard made by `replay_new` (refused if it exists)."""
        with FileLock(self.path):
            if self.path.exists():
                raise UsageError(
                    "state file already exists: continue it with `okstra wizard step`",
                    path=self.path,
                )
            self._save(self._state.copy())

    def history(self) -> list[HistoryEntry]:
        """The answered steps in answer order, with echo and a short step title."""
        ctx, state, _prompt = self._current()
        return history(ctx, state)

    def answers(self) -> list[AnswerEntry]:
        """The answers so far in asking order, replayable with `okstra wizard init
        --answers` (an answer given again after an edit is at its step's place)."""
        ctx, state, _prompt = self._current()
        return [AnswerEntry(step=e.step, answer=e.answer) for e in asking_order(ctx, state)]

    def confirmation(self) -> Confirmation:
        """The confirmation block for the current state (complete or not)."""
        ctx, work, _prompt = self._current()
        return confirmation(ctx, work)

    def outcome(self) -> Outcome:
        """The outcome of a confirmed wizard; `OkstraError` if aborted or unconfirmed.

        The answers are re-checked first: when one no longer holds (a CLI removed, a
        profile edited) the outcome is refused, naming it; `show` rewinds it.
        """
        build_outcome = _outcomes()
        if self._checked is not None:
            # Replayed in this process a moment ago: every answer was checked as it was
            # applied, and the last one's prompt checked the whole team.
            return build_outcome(self._checked, self._state)
        work = self._state.copy()
        ctx = self._ctx(work)
        if work.confirmed is True and not work.aborted:
            note = revalidate(ctx, work)
            if note is not None:
                raise OkstraError(
                    ctx.text.get(
                        "errors.outcome_stale",
                        step=note.step,
                        answer=note.answer,
                        reason=note.reason,
                    ),
                    path=self.path,
                )
            found = team_blocker(ctx, work)
            if found is not None:
                raise OkstraError(
                    ctx.text.get("errors.outcome_blocked", reason=found.advice), path=self.path
                )
        return build_outcome(ctx, self._state, self.source)

    def preview_outcome(self) -> Outcome:
        """The outcome this wizard would have if it were confirmed now (read-only).

        The confirm screen runs a dry-run prepare (and so preflight) on it before the
        person chooses Launch. Raises `OkstraError` when the setup is incomplete.
        """
        build_outcome = _outcomes()
        work = self._state.copy()
        ctx = self._ctx(work)
        advance(ctx, work)  # the same normalisation the confirmation shows
        work.confirmed = True
        work.aborted = False
        return build_outcome(ctx, work, self.source)

    def progress(self, *, simulate: bool = True) -> tuple[int, int]:
        """(answered steps, total): the steps that apply, answered or still to ask.

        With `simulate`, the total is found by taking every default from here (stable
        while a person takes them: `group.simulated_progress`); without, it is
        estimated (role counts not yet chosen at their recommended value), which is
        cheaper for listing many setups. The first number only goes down by what a
        rewind removes.
        """
        ctx, state, _prompt = self._current()
        if simulate:
            return simulated_progress(ctx, state)
        return progress(ctx, state)

    def grouped(self, prompt: Prompt) -> Prompt:
        """`prompt` (the current one) as the protocol offers it: the `pick_group` it
        starts when the host declared a multi-question tool, else itself."""
        if not groups_prompts(self._state.available_functions):
            return prompt
        work = self._state.copy()
        ctx = self._ctx(work)
        return group_prompt(ctx, work, advance(ctx, work))

    def submit_group(self, answers: Mapping[str, object]) -> StepResult:
        """Answer the current `pick_group` prompt: one answer per question, all applied
        (each checked as a single answer is) or none saved.

        Raises:
            AnswerRefused: the current prompt is no group, or an answer is refused
                (its step named); the state file is unchanged.
        """

        def change(ctx: StepContext, work: WizardState) -> StepResult:
            group = group_prompt(ctx, work, advance(ctx, work))
            if group.kind != "pick_group":
                raise refuse(ctx, "group_not_grouped")
            echo, nxt = apply_group(ctx, work, group, answers)
            return StepResult(echo=echo, next=nxt)

        return self._transaction(change)

    def discard_if_unanswered(self) -> bool:
        """Remove this wizard's state file and its `.lock` sidecar if nothing was answered.

        For a front end closing a wizard it created: "New setup" then quit must not
        leave an empty "(task not chosen)" entry behind. Only a v2 file okstra created
        is removed: never a v1 source, never a companion (it carries `legacySource`),
        never a file with an answer, a remembered answer (a rewind dropped it: the
        person did answer), or a confirmed/aborted flag. Decided under the lock (the
        one `hold()` keeps, or taken here on the file as on disk).

        Returns:
            True when the file was removed.

        Raises:
            StateInUseError: another process holds the state file.
            StateFileError: the file on disk no longer loads.
        """
        with self._locked() as current:
            if self.legacy or not self.path.exists() or not unanswered(current):
                return False
            remove_state_file(self.path)
            return True

    @contextlib.contextmanager
    def hold(self) -> Iterator[Wizard]:
        """Keep the state file's lock while the block runs (a long-lived front end).

        Raises:
            StateInUseError: another process holds it.
        """
        if self._lock is not None:
            yield self
            return
        lock = FileLock(self.path, transient=self.legacy)
        lock.acquire()
        try:
            if self.path.exists():
                self._reload()
            self._lock = lock
            yield self
        finally:
            self._lock = None
            lock.release()
