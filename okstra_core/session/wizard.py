"""The wizard session: one state file and the transactions on it.

Every change (`submit`, `rewind`, `back`, `refresh`) takes the file's advisory lock
(fail fast: "state file is in use (pid N)"), re-reads the file, applies the change to
a copy and saves it atomically; a refused answer or any error saves nothing. `hold()`
keeps the lock for a long-lived front end; read-only calls never take it. A file of
the earlier okstra is converted in memory and its progress saved to its companion.
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
from ..records import dataclass, fields_of
from ..store import FileLock, atomic_write_bytes, dumps_json, read_bytes
from ..wizard.base import StepContext, refuse
from ..wizard.confirm import Confirmation, confirmation
from ..wizard.engine import (
    ReplayResult,
    advance,
    apply_answer,
    apply_group,
    asking_order,
    default_to_accept,
    group_prompt,
    groups_prompts,
    history,
    progress,
    replay_answers,
    simulated_progress,
)
from ..wizard.flow import back_target, revalidate, rewind
from ..wizard.prompt import AnswerEntry, HistoryEntry, Prompt, StepResult
from ..wizard.roles import team_blocker
from ..wizard.state import WizardState, remember_state
from .statefile import Loaded, load, new_state, new_state_path, remove_state_file, unanswered

if TYPE_CHECKING:
    from ..wizard.outcome import Outcome

_T = TypeVar("_T")

__all__ = ["Wizard", "WizardView"]


def _exists(path: Path) -> UsageError:
    return UsageError("state file already exists: continue it with `okstra wizard step`", path=path)


@dataclass(frozen=True)
class WizardView:
    """What `show` prints, from one load: prompt, confirmation, history, progress."""

    prompt: Prompt
    confirmation: Confirmation
    history: list[HistoryEntry]
    progress: tuple[int, int]


class Wizard:
    """One wizard state file and the operations on it.

    `path` is the v2 file written (a v1 source's companion), `source` the file opened;
    `legacy` says it came from the earlier okstra, `notes` what converting it changed.
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
        # The context that checked every answer of a `replay_new` state: no second check.
        self._checked: StepContext | None = None
        self._last_ctx: StepContext | None = None

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
        """Create a new wizard state file (None: a fresh name in the wizards dir).

        The host is detected when None; `task_type` answers that step up front. Raises
        `UsageError` for a bad argument or a state file that exists already.
        """
        env = environment or Environment.real()
        path = Path(state_path) if state_path is not None else new_state_path(env)
        _ctx, state = new_state(env, project_root, host, entry_mode, task_type, available_functions)
        wizard = cls(Loaded(path, path, state, legacy=False), env)
        wizard.save_new()
        return wizard

    @classmethod
    def open(cls, state_path: Path | str, *, environment: Environment | None = None) -> Wizard:
        """Open an existing state file (v2, or v1 through its companion); raises
        `StateFileError` when it does not load (file and field named)."""
        env = environment or Environment.real()
        return cls(load(Path(state_path), env), env)

    def _ctx(self, state: WizardState | None = None) -> StepContext:
        ctx = StepContext(self.environment, Path((state or self._state).project_root))
        self._last_ctx = ctx
        return ctx

    def config_notes(self) -> tuple[str, ...]:
        """What reading the model defaults left out, and the earlier global config's note."""
        return (self._last_ctx or self._ctx()).scopes.notes

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

    def _commit(self, current: WizardState, work: WizardState) -> None:
        if work != current or not self.path.exists():
            self._save(work)

    def _transaction(self, change: Callable[[StepContext, WizardState], _T]) -> _T:
        with self._locked() as current:
            work = current.copy()
            result = change(self._ctx(work), work)
            self._commit(current, work)
            return result

    @property
    def state(self) -> WizardState:
        """A copy of the current state (as last read or written)."""
        return self._state.copy()

    def _current(self) -> tuple[StepContext, WizardState, Prompt]:
        """The state as the next prompt sees it (stale answers rewound), read-only."""
        work = self._state.copy()
        ctx = self._ctx(work)
        return ctx, work, advance(ctx, work)

    def view(self) -> WizardView:
        """The prompt, confirmation, history and progress of one load (for `show`)."""
        ctx, work, prompt = self._current()
        return WizardView(
            prompt, confirmation(ctx, work), history(ctx, work), simulated_progress(ctx, work)
        )

    def prompt(self) -> Prompt:
        """The current prompt (read-only: nothing is saved)."""
        return self._current()[2]

    def refresh(self) -> Prompt:
        """Compute the current prompt and save what that normalised (dropped models);
        nothing is locked or written when that changes nothing in the file."""
        if self._lock is None and self.path.exists():
            _ctx, work, prompt = self._current()
            if work == self._state:
                return prompt
        return self._transaction(lambda ctx, work: advance(ctx, work))

    def submit(
        self, answer: str, *, step: str | None = None, defaulted: bool = False
    ) -> StepResult:
        """Answer the current prompt (`step`: the id it is for, refused on a mismatch;
        `defaulted`: the default taken by `accept_defaults`, recorded as such).

        Raises `AnswerRefused` (the file unchanged) or `StateInUseError`.
        """

        def change(ctx: StepContext, work: WizardState) -> StepResult:
            return StepResult(*apply_answer(ctx, work, answer, step, defaulted=defaulted))

        return self._transaction(change)

    def accept_defaults(self) -> Prompt:
        """Answer this step and the next ones with their defaults (`default_to_accept`),
        each saved as `submit` does, up to a step without one; `AnswerRefused` when the
        current step has none (nothing saved)."""
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
            return _rewound(ctx, work, step_id)

        return self._transaction(change)

    def back(self) -> Prompt:
        """Rewind the last answered step."""

        def change(ctx: StepContext, work: WizardState) -> Prompt:
            target = back_target(ctx, work, advance(ctx, work).id)
            if target is None:
                raise refuse(ctx, "nothing_to_undo")
            return _rewound(ctx, work, target)

        return self._transaction(change)

    def replay(self, entries: Iterable[AnswerEntry]) -> ReplayResult:
        """Apply answers in order as `submit` would, up to the first refused one, in one
        transaction (`engine.replay_answers`): the file is written once."""
        with self._locked() as current:
            work, result = replay_answers(self._ctx(current), current, entries)
            self._commit(current, work)
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
        """A new wizard (the arguments of `init`) with `entries` replayed, in memory
        only until `save_new()`; every answer was checked as applied, so `outcome()`
        checks none again. Raises `UsageError` as `init`."""
        env = environment or Environment.real()
        path = Path(state_path) if state_path is not None else new_state_path(env)
        if path.exists():
            raise _exists(path)
        ctx, state = new_state(env, project_root, host, entry_mode, task_type, ())
        work, result = replay_answers(ctx, state, entries)
        wizard = cls(Loaded(path, path, work, legacy=False), env)
        wizard._checked = ctx
        return wizard, result

    def save_new(self) -> None:
        """Write the state file of a new wizard (refused if it exists)."""
        with FileLock(self.path):
            if self.path.exists():
                raise _exists(self.path)
            self._save(self._state.copy())

    def history(self) -> list[HistoryEntry]:
        """The answered steps in answer order, with echo and a short step title."""
        ctx, state, _prompt = self._current()
        return history(ctx, state)

    def answers(self) -> list[AnswerEntry]:
        """The answers so far in asking order, replayable with `wizard init --answers`."""
        ctx, state, _prompt = self._current()
        return [AnswerEntry(step=e.step, answer=e.answer) for e in asking_order(ctx, state)]

    def confirmation(self) -> Confirmation:
        """The confirmation block for the current state (complete or not)."""
        ctx, work, _prompt = self._current()
        return confirmation(ctx, work)

    def outcome(self) -> Outcome:
        """The outcome of a confirmed wizard; `OkstraError` if aborted, unconfirmed, or
        an answer (re-checked first) no longer holds."""
        # The outcome holds the typed run request: loaded only when one is built.
        from ..wizard.outcome import build_outcome

        if self._checked is not None:
            # Replayed in this process: every answer and the whole team were checked.
            return build_outcome(self._checked, self._state)
        work = self._state.copy()
        ctx = self._ctx(work)
        if work.confirmed is True and not work.aborted:
            note = revalidate(ctx, work)
            if note is not None:
                said = ctx.text.get("errors.outcome_stale", **fields_of(note, "step answer reason"))
                raise OkstraError(said, path=self.path)
            found = team_blocker(ctx, work)
            if found is not None:
                said = ctx.text.get("errors.outcome_blocked", reason=found.advice)
                raise OkstraError(said, path=self.path)
        return build_outcome(ctx, self._state, self.source)

    def preview_outcome(self) -> Outcome:
        """The outcome if the wizard were confirmed now (read-only; for a dry run)."""
        from ..wizard.outcome import build_outcome

        ctx, work, _prompt = self._current()  # normalised as the confirmation shows it
        work.confirmed = True
        work.aborted = False
        return build_outcome(ctx, work, self.source)

    def progress(self, *, simulate: bool = True) -> tuple[int, int]:
        """(answered steps, total): with `simulate`, the total taking every default from
        here (`engine.simulated_progress`); without, a cheaper estimate (`progress`)."""
        ctx, state, _prompt = self._current()
        if simulate:
            return simulated_progress(ctx, state)
        return progress(ctx, state)

    def grouped(self, prompt: Prompt) -> Prompt:
        """The current `prompt` as the protocol offers it (a `pick_group` for a host
        with a multi-question tool)."""
        if not groups_prompts(self._state.available_functions):
            return prompt
        ctx, work, current = self._current()
        return group_prompt(ctx, work, current)

    def submit_group(self, answers: Mapping[str, object]) -> StepResult:
        """Answer the current `pick_group` prompt: all answers applied or none saved
        (`AnswerRefused`: no group, or an answer refused, its step named)."""

        def change(ctx: StepContext, work: WizardState) -> StepResult:
            group = group_prompt(ctx, work, advance(ctx, work))
            if group.kind != "pick_group":
                raise refuse(ctx, "group_not_grouped")
            return StepResult(*apply_group(ctx, work, group, answers))

        return self._transaction(change)

    def discard_if_unanswered(self) -> bool:
        """Remove this wizard's file and `.lock` sidecar if nothing was answered (a
        front end closing a wizard it created); decided under the lock.

        Only a v2 file okstra created with no answer, remembered answer or
        confirmed/aborted flag. Raises `StateInUseError` or `StateFileError`.
        """
        with self._locked() as current:
            if self.legacy or not self.path.exists() or not unanswered(current):
                return False
            remove_state_file(self.path)
            return True

    @contextlib.contextmanager
    def hold(self) -> Iterator[Wizard]:
        """Keep the state file's lock while the block runs (raises `StateInUseError`)."""
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


def _rewound(ctx: StepContext, work: WizardState, step_id: str) -> Prompt:
    work.stale = None
    rewind(ctx, work, step_id)
    return advance(ctx, work)
