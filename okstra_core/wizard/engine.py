"""The wizard engine: one state machine for the terminal app and the JSON protocol.

`Wizard` owns a state file. Every change (`submit`, `rewind`, `back`, `refresh`) is a
transaction: take the file's advisory lock (fail fast: "state file is in use (pid N)"),
re-read the file, apply the change to a copy, save it atomically, release. A refused
answer or any error saves nothing — the file stays byte-identical. `hold()` keeps the
lock for a long-lived front end (the TUI). Read-only calls (`prompt`, `history`,
`confirmation`, `outcome`, `answers`, `progress`) never take or wait for the lock.

A legacy (v1) file is converted in memory by `legacy.load_legacy`; progress is saved
to its companion file (`Wizard.path`) and the v1 file is never written.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar, cast

from ..environment import Environment
from ..errors import AnswerRefused, OkstraError, StateFileError, UsageError
from ..paths import prompts_root, user_dirs
from ..setup_runs import runs_file
from ..store import (
    FileLock,
    atomic_write_json,
    lock_path_for,
    parse_json_object,
    read_bytes,
)
from .context import StepContext
from .outcome import Confirmation, Outcome, build_outcome, confirmation
from .prompt import AnswerEntry, HistoryEntry, Prompt, StepResult
from .rewind import back_target, rewind
from .roles import (
    LEADER_SESSION,
    ROLE_ADD,
    ROLE_COUNT,
    ROLE_MODEL,
    is_role_step,
    model_instances,
    next_role_prompt,
    out_of_order,
    parse_role_step,
    submit_role,
)
from .state import CHOSEN, AnsweredStep, WizardState, classify_version, parse_v2
from .steps import (
    EDIT_TARGET,
    STATIC_STEPS,
    STEP_BY_ID,
    TASK_TYPE,
    done_prompt,
    echo_template,
    refuse,
    render_echo,
)

_T = TypeVar("_T")

STEP_KIND_OF_ROLE = {
    LEADER_SESSION: "leader_session",
    ROLE_COUNT: "role_count",
    ROLE_ADD: "role_add",
    ROLE_MODEL: "role_model",
}


def step_kind(step_id: str) -> str:
    """The text-catalog kind of a step id (`role-model:x:2` → `role_model`)."""
    parsed = parse_role_step(step_id)
    if parsed is not None:
        return STEP_KIND_OF_ROLE[parsed.kind]
    return step_id


# ---------------------------------------------------------------------------- the machine


def advance(ctx: StepContext, state: WizardState) -> Prompt:
    """The prompt to ask now. May normalise `state` (drop no-longer-valid models)."""
    if state.aborted or state.confirmed is True:
        return done_prompt(ctx, state)
    after: list[Any] = []
    for step in STATIC_STEPS:
        if not step.before_role_block:
            after.append(step)
            continue
        if not state.is_answered(step.id) and step.applies(ctx, state):
            return step.build(ctx, state)
    role_prompt = next_role_prompt(ctx, state)
    if role_prompt is not None:
        return role_prompt
    for step in after:
        if not state.is_answered(step.id) and step.applies(ctx, state):
            return cast(Prompt, step.build(ctx, state))
    return done_prompt(ctx, state)


def apply_answer(
    ctx: StepContext, state: WizardState, answer: str, step: str | None = None
) -> tuple[str, Prompt]:
    """Submit `answer` to the current prompt of `state` (a working copy).

    Args:
        ctx: the step context.
        state: the working copy, changed in place.
        answer: the option value or the text.
        step: when given, the step id the answer is meant for; a mismatch is refused
            (answers files, out-of-order role-model answers).

    Returns:
        (echo, next prompt).

    Raises:
        AnswerRefused: the answer does not fit; the caller discards the copy.
    """
    prompt = advance(ctx, state)
    if step is not None and step != prompt.id:
        problem = out_of_order(ctx, state, step)
        raise problem or refuse(ctx, "wrong_step", step=step, current=prompt.id)
    if prompt.kind == "done":
        raise refuse(ctx, "finished")
    label = answer
    if prompt.kind == "pick":
        option = prompt.option(answer)
        if option is None:
            raise refuse(
                ctx,
                "not_an_option",
                answer=answer,
                options=", ".join(o.value for o in prompt.options if o.selectable) or "-",
            )
        if option.disabled_reason is not None:
            raise refuse(ctx, "option_disabled", answer=answer, reason=option.disabled_reason)
        label = option.label
    position = len(state.answered)
    provenance = CHOSEN
    if prompt.id == EDIT_TARGET:
        rewind(state, answer)
        echo = render_echo(prompt.echo_template, answer, label)
        return echo, advance(ctx, state)
    if is_role_step(prompt.id):
        stored = submit_role(ctx, state, prompt, answer)
        if prompt.id.startswith(f"{ROLE_MODEL}:") and answer == prompt.default:
            option = prompt.option(answer)
            scope = option.meta.get("provenance", "") if option else ""
            # Taking the offered default records where that default came from.
            if scope.startswith("default:"):
                provenance = scope
        if prompt.id not in state.role_selection_order:
            state.role_selection_order.append(prompt.id)
        stored_answer = answer
        echo_label = label if prompt.kind == "pick" else stored
    else:
        stored = STEP_BY_ID[prompt.id].submit(ctx, state, answer, prompt)
        stored_answer = stored if prompt.kind == "text" else answer
        echo_label = label if prompt.kind == "pick" else stored_answer
    echo = render_echo(prompt.echo_template, stored_answer, echo_label)
    state.answered.insert(
        position,
        AnsweredStep(step=prompt.id, answer=stored_answer, provenance=provenance, echo=echo),
    )
    state.remembered_answers.pop(prompt.id, None)
    return echo, advance(ctx, state)


# ---------------------------------------------------------------------------- loading


def _read_state_bytes(path: Path) -> tuple[bytes, Any]:
    data = read_bytes(path, what="wizard state file", error=StateFileError)
    raw = parse_json_object(data, path, what="wizard state JSON object", error=StateFileError)
    return data, raw


@dataclass(frozen=True)
class _Loaded:
    source: Path  # the file the person named
    path: Path  # the v2 file written (the companion of a v1 source)
    state: WizardState
    legacy: bool


def _load(source: Path, environment: Environment, ctx: StepContext | None = None) -> _Loaded:
    _data, raw = _read_state_bytes(source)
    try:
        version = classify_version(raw)
    except StateFileError as exc:
        raise StateFileError(exc.message, path=source, field=exc.field) from None
    if version == 2:
        return _Loaded(source, source, parse_v2(raw, str(source)), legacy=False)
    from . import legacy

    project_root = raw.get("project_root")
    context = ctx or StepContext(
        environment, Path(project_root) if isinstance(project_root, str) and project_root else None
    )
    companion, converted, _resumed = legacy.load_legacy(
        source,
        profile_loader=context.catalog.profile,
        pool=context.pool,
        scopes=context.scopes,
        environment=environment,
    )
    return _Loaded(source, Path(companion), parse_v2(converted, str(companion)), legacy=True)


def resolve_state_path(value: str, environment: Environment | None = None) -> Path:
    """Where `--state VALUE` points.

    A bare name (no path separator) lives in the wizards dir:
    `<state dir>/wizards/<name>.json` (".json" added when missing). Anything with a
    separator is a path (relative to the current directory).
    """
    env = (environment or Environment.real()).env
    if "/" in value or value.startswith("~"):
        return Path(value).expanduser()
    name = value if value.endswith(".json") else f"{value}.json"
    return user_dirs(env).wizards / name


def new_state_path(environment: Environment) -> Path:
    """A fresh, unused state file name in the wizards dir, from the clock."""
    directory = user_dirs(environment.env).wizards
    stamp = environment.now().strftime("%Y%m%d-%H%M%S")
    path = directory / f"{stamp}.json"
    n = 1
    while path.exists():
        n += 1
        path = directory / f"{stamp}-{n}.json"
    return path


# ---------------------------------------------------------------------------- Wizard


@dataclass(frozen=True)
class ReplayResult:
    """What replaying an answers file did.

    Attributes:
        applied: how many entries were applied (skipped pre-filled ones included).
        echo: the echo of the last applied answer ("" if none).
        next: the prompt after the last applied answer.
        error: the refusal of the first refused entry, or None when all applied.
        index: the 0-based index of the refused entry, or None.
    """

    applied: int
    echo: str
    next: Prompt
    error: str | None = None
    index: int | None = None


class Wizard:
    """One wizard state file and the operations on it.

    Attributes:
        path: the v2 file this wizard writes (a companion file for a v1 source).
        source: the file that was opened (the v1 file for a legacy wizard).
        legacy: True when opened from a v1 file.
    """

    def __init__(self, loaded: _Loaded, environment: Environment) -> None:
        self.environment = environment
        self.source = loaded.source
        self.path = loaded.path
        self.legacy = loaded.legacy
        self._state = loaded.state
        self._lock: FileLock | None = None

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
        root = Path(project_root).expanduser()
        if not root.is_dir():
            raise UsageError("project root is not a directory", path=root, field="--project-root")
        root = root.resolve()
        ctx = StepContext(env, root)
        from ..catalog import detect_host, load_project_config
        from ..resolver import check_entry_mode

        host_spec = ctx.host(host) if host else detect_host(env, ctx.catalog)
        mode = entry_mode or "spawn-process"
        if mode not in ("spawn-process", "current-session"):
            raise UsageError(
                f"unknown entry mode {mode!r}: expected spawn-process or current-session",
                field="--entry-mode",
            )
        check_entry_mode(host_spec, mode)  # type: ignore[arg-type]
        project = load_project_config(root)
        state = WizardState(
            role_counts={},
            role_models={},
            role_selection_order=[],
            workspace_root=str(prompts_root(env.env)),
            project_root=str(root),
            project_id=project.project_id or root.name,
            host_runtime=host_spec.id,
            host_entry_mode=mode,  # type: ignore[arg-type]
            available_functions=list(available_functions),
        )
        if task_type:
            ctx.profile(task_type)  # refuses an unknown task type, naming the known ones
            state.task_type = task_type
            label = ctx.text.get("task_type.option.plain", task_type=task_type, title=task_type)
            state.answered.append(
                AnsweredStep(
                    step=TASK_TYPE,
                    answer=task_type,
                    echo=render_echo(echo_template(ctx, "task_type"), task_type, label),
                )
            )
        with FileLock(path):
            if path.exists():
                raise UsageError(
                    "state file already exists: continue it with `okstra wizard step`",
                    path=path,
                )
            wizard = cls(_Loaded(path, path, state, legacy=False), env)
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
        return cls(_load(Path(state_path), env), env)

    # -- internals --------------------------------------------------------------------

    def _ctx(self, state: WizardState | None = None) -> StepContext:
        return StepContext(self.environment, Path((state or self._state).project_root))

    def _save(self, state: WizardState) -> None:
        state.revision += 1
        state.updated_at = self.environment.now().isoformat()
        atomic_write_json(self.path, state.to_file())
        self._state = state

    @contextlib.contextmanager
    def _locked(self) -> Iterator[WizardState]:
        """Hold the lock (unless `hold()` already does) and yield the fresh state."""
        if self._lock is not None:
            yield self._state
            return
        with FileLock(self.path):
            # Another process may have written since we read: start from the disk.
            if self.path.exists() or self.legacy:
                self._reload()
            yield self._state

    def _reload(self) -> None:
        loaded = _load(self.source, self.environment)
        self.path = loaded.path
        self._state = loaded.state

    def _transaction(self, change: Callable[[StepContext, WizardState], _T]) -> _T:
        with self._locked() as current:
            work = current.model_copy(deep=True)
            ctx = self._ctx(work)
            result = change(ctx, work)
            if work.model_dump() != current.model_dump() or not self.path.exists():
                self._save(work)
            return result

    # -- the API ----------------------------------------------------------------------

    @property
    def state(self) -> WizardState:
        """A copy of the current state (as last read or written)."""
        return self._state.model_copy(deep=True)

    def prompt(self) -> Prompt:
        """The current prompt (read-only: nothing is saved)."""
        work = self._state.model_copy(deep=True)
        return advance(self._ctx(work), work)

    def refresh(self) -> Prompt:
        """Compute the current prompt and save what that normalised (dropped models)."""
        return self._transaction(lambda ctx, work: advance(ctx, work))

    def submit(self, answer: str, *, step: str | None = None) -> StepResult:
        """Answer the current prompt.

        Args:
            answer: an option value (pick) or the text (text).
            step: optionally, the step id the answer is for (refused on mismatch).

        Raises:
            AnswerRefused: the answer was refused; the state file is unchanged.
            StateInUseError: another process holds the state file.
        """

        def change(ctx: StepContext, work: WizardState) -> StepResult:
            echo, nxt = apply_answer(ctx, work, answer, step)
            return StepResult(echo=echo, next=nxt)

        return self._transaction(change)

    def rewind(self, step_id: str) -> Prompt:
        """Edit & rewind to an answered step (SPEC §6.3); returns the new prompt."""

        def change(ctx: StepContext, work: WizardState) -> Prompt:
            if not work.is_answered(step_id):
                raise refuse(ctx, "not_answered", step=step_id)
            rewind(work, step_id)
            return advance(ctx, work)

        return self._transaction(change)

    def back(self) -> Prompt:
        """Rewind the last answered step."""

        def change(ctx: StepContext, work: WizardState) -> Prompt:
            target = back_target(work, advance(ctx, work).id)
            if target is None:
                raise refuse(ctx, "nothing_to_undo")
            rewind(work, target)
            return advance(ctx, work)

        return self._transaction(change)

    def replay(self, entries: Iterable[AnswerEntry]) -> ReplayResult:
        """Apply answers in order through `submit`, stopping at the first refused one.

        An entry for a step that is already answered with the same answer (pre-filled
        by reusing a run, or converted from v1) is skipped.
        """
        applied = 0
        echo = ""
        for index, entry in enumerate(entries):
            if self._state.answer_of(entry.step) == entry.answer:
                applied += 1
                continue
            try:
                result = self.submit(entry.answer, step=entry.step)
            except AnswerRefused as exc:
                return ReplayResult(applied, echo, self.prompt(), exc.message, index)
            applied += 1
            echo = result.echo
        return ReplayResult(applied, echo, self.prompt())

    def history(self) -> list[HistoryEntry]:
        """The answered steps in answer order, with echo and a short step title."""
        ctx = self._ctx()
        out: list[HistoryEntry] = []
        for entry in self._state.answered:
            kind = step_kind(entry.step)
            parsed = parse_role_step(entry.step)
            values = {
                "role": parsed.role if parsed else "",
                "ordinal": parsed.ordinal if parsed else 0,
            }
            echo = entry.echo or render_echo(
                echo_template(ctx, kind, **values), entry.answer, entry.answer
            )
            out.append(
                HistoryEntry(
                    step_id=entry.step,
                    answer=entry.answer,
                    echo=echo,
                    label=ctx.text.get(f"{kind}.title", **values),
                    provenance=entry.provenance,
                )
            )
        return out

    def answers(self) -> list[AnswerEntry]:
        """The answers so far, replayable with `okstra wizard init --answers`."""
        return [AnswerEntry(step=e.step, answer=e.answer) for e in self._state.answered]

    def confirmation(self) -> Confirmation:
        """The confirmation block for the current state (complete or not)."""
        work = self._state.model_copy(deep=True)
        ctx = self._ctx(work)
        advance(ctx, work)  # same normalisation the prompt shows
        return confirmation(ctx, work)

    def outcome(self) -> Outcome:
        """The outcome of a confirmed wizard; `OkstraError` if aborted or unconfirmed."""
        return build_outcome(self._ctx(), self._state)

    def preview_outcome(self) -> Outcome:
        """The outcome this wizard would have if it were confirmed now (read-only).

        The confirm screen runs a dry-run prepare (and so preflight) on it before the
        person chooses Launch. Raises `OkstraError` when the setup is incomplete.
        """
        work = self._state.model_copy(deep=True)
        ctx = self._ctx(work)
        advance(ctx, work)  # the same normalisation the confirmation shows
        work.confirmed = True
        work.aborted = False
        return build_outcome(ctx, work)

    def progress(self) -> tuple[int, int]:
        """(answered steps, estimated total) — the total is an estimate ("~m")."""
        state = self._state.model_copy(deep=True)
        ctx = self._ctx(state)
        answered = len(state.answered)
        if state.confirmed is True or state.aborted:
            return answered, answered
        remaining = 0
        for step in STATIC_STEPS:
            if step.id == EDIT_TARGET or state.is_answered(step.id):
                continue
            try:
                if step.applies(ctx, state):
                    remaining += 1
            except OkstraError:
                remaining += 1
        if not state.task_type:
            remaining += 3  # a typical team: a count and a couple of models
        else:
            try:
                profile = ctx.profile(state.task_type)
                if state.host_entry_mode == "current-session" and not state.is_answered(
                    LEADER_SESSION
                ):
                    remaining += 1
                remaining += sum(
                    1
                    for r in profile.static_roles
                    if r.min != r.max and r.role not in state.role_counts
                )
                remaining += sum(
                    1
                    for role, n in model_instances(profile, state)
                    if n > len(state.role_models.get(role, []))
                )
            except OkstraError:
                remaining += 3
        return answered, answered + remaining

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
            if self.legacy or not self.path.exists() or not _unanswered(current):
                return False
            _remove_state_file(self.path)
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
        lock = FileLock(self.path)
        lock.acquire()
        try:
            if self.path.exists():
                self._reload()
            self._lock = lock
            yield self
        finally:
            self._lock = None
            lock.release()


# ---------------------------------------------------------------------------- removal


def _unanswered(state: WizardState) -> bool:
    """A v2 state nobody has answered anything in (nothing worth keeping)."""
    return (
        state.legacy_source is None
        and not state.answered
        and not state.remembered_answers
        and not state.aborted
        and state.confirmed is not True
    )


def _remove_state_file(path: Path) -> None:
    # The caller holds the lock: nothing can write the file meanwhile. The sidecar goes
    # too, else every removed wizard leaves a stray `.lock` in the wizards dir (state
    # locks fail fast, so no process is queued on the old sidecar's inode).
    path.unlink(missing_ok=True)
    lock_path_for(path).unlink(missing_ok=True)
    # The record of the runs this setup prepared goes with it.
    runs = runs_file(path)
    runs.unlink(missing_ok=True)
    lock_path_for(runs).unlink(missing_ok=True)


def delete_wizard(path: Path | str, environment: Environment | None = None) -> None:
    """Delete a wizard listed by `list_wizards` (the start screen's `d`).

    Only a v2 state file directly in the wizards dir is deleted, with its `.lock`
    sidecar. A v1 file is never changed by okstra (SPEC §6.5) and a file that does not
    load may be one, so both are refused; so is a companion whose v1 source still
    exists (it is that wizard's saved progress). Runs under the state file's lock.

    Raises:
        UsageError: not a file of the wizards dir, a v1 file, or a live companion.
        StateInUseError: the wizard is open elsewhere (the app, a step).
        StateFileError: the file does not load (it is left alone).
    """
    env = environment or Environment.real()
    path = Path(path)
    directory = user_dirs(env.env).wizards
    if path.suffix != ".json" or path.parent.resolve() != directory.resolve():
        raise UsageError(
            f"only a wizard state file in {directory} can be deleted", path=path, field="path"
        )
    if not path.is_file():
        raise UsageError("no such wizard state file", path=path)
    with FileLock(path):
        _data, raw = _read_state_bytes(path)
        try:
            version = classify_version(raw)
        except StateFileError as exc:
            raise StateFileError(exc.message, path=path, field=exc.field) from None
        if version != 2:
            raise UsageError(
                "a v1 wizard state file is never changed by okstra: delete it yourself",
                path=path,
            )
        state = parse_v2(raw, str(path))
        source = state.legacy_source
        if source is not None and Path(source.path).exists():
            raise UsageError(
                f"this is the saved progress of the v1 file {source.path}: delete that file first",
                path=path,
            )
        _remove_state_file(path)


# ---------------------------------------------------------------------------- list


@dataclass(frozen=True)
class WizardSummary:
    """One resumable wizard for the start screen / `okstra wizard list`.

    Attributes:
        path: the file to open (the v1 source for a legacy wizard).
        task: the task key ("" when not chosen yet).
        task_type: the task type ("" when not chosen yet).
        progress: (answered, ~total).
        updated_at: last save (None when unknown).
        legacy: opened from a v1 file.
        status: `in-progress`, `confirmed` or `aborted`.
        problem: why it cannot be opened, or None.
    """

    path: Path
    task: str
    task_type: str
    progress: tuple[int, int]
    updated_at: datetime | None
    legacy: bool
    status: str
    problem: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "task": self.task,
            "taskType": self.task_type,
            "progress": {"answered": self.progress[0], "total": self.progress[1]},
            "updatedAt": self.updated_at.isoformat() if self.updated_at else None,
            "legacy": self.legacy,
            "status": self.status,
            "problem": self.problem,
        }


def _parse_time(value: str) -> datetime | None:
    try:
        return datetime.fromisoformat(value) if value else None
    except ValueError:
        return None


def list_wizards(environment: Environment | None = None) -> list[WizardSummary]:
    """Resumable wizards in `<state dir>/wizards/`, newest first; v1 files included.

    A companion file is not listed on its own while its v1 source exists (the v1
    entry shows the companion's progress). A file that cannot be opened is listed
    with its `problem`. Read-only: takes no lock.
    """
    env = environment or Environment.real()
    directory = user_dirs(env.env).wizards
    if not directory.is_dir():
        return []
    out: list[WizardSummary] = []
    for path in sorted(directory.glob("*.json")):
        if path.name.startswith("."):
            continue
        try:
            wizard = Wizard.open(path, environment=env)
        except OkstraError as exc:
            mtime = datetime.fromtimestamp(path.stat().st_mtime).astimezone()
            out.append(WizardSummary(path, "", "", (0, 0), mtime, False, "broken", exc.render()))
            continue
        state = wizard._state
        source = state.legacy_source
        if not wizard.legacy and source is not None and Path(source.path).exists():
            continue
        try:
            progress = wizard.progress()
        except OkstraError:
            progress = (len(state.answered), len(state.answered))
        status = "aborted" if state.aborted else "confirmed" if state.confirmed else "in-progress"
        out.append(
            WizardSummary(
                path=path,
                task=state.task_key,
                task_type=state.task_type,
                progress=progress,
                updated_at=_parse_time(state.updated_at),
                legacy=wizard.legacy,
                status=status,
            )
        )

    def newest(summary: WizardSummary) -> tuple[float, str]:
        # Newest first; a file without a readable time sorts last.
        when = summary.updated_at
        return (-when.timestamp() if when is not None else float("inf"), summary.path.name)

    out.sort(key=newest)
    return out
