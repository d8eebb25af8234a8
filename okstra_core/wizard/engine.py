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
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..catalog import detect_host, load_project_config
from ..environment import Environment
from ..errors import AnswerRefused, OkstraError, StateFileError, UsageError
from ..paths import prompts_root, user_dirs
from ..records import dataclass
from ..resolver import Blocker, check_counts, check_entry_mode
from ..setup_runs import runs_file
from ..store import (
    FileLock,
    atomic_write_bytes,
    dumps_json,
    lock_path_for,
    parse_json_object,
    read_bytes,
)
from .base import Step, echo_template, refuse, render_echo, with_notes
from .confirm import Confirmation, confirmation
from .context import StepContext
from .flow import back_target, rewind, steps
from .ids import (
    CONFIRM,
    EDIT_TARGET,
    LEADER_SESSION,
    ROLE_MODEL,
    TASK_TYPE,
    is_role_step,
    parse_role_step,
    step_kind,
)
from .prompt import AnswerEntry, HistoryEntry, Option, Prompt, PromptMeta, StepResult
from .roles import out_of_order, team_blocker
from .state import (
    CHOSEN,
    AnsweredStep,
    StaleNote,
    WizardState,
    classify_version,
    parse_v2,
    recall_state,
    remember_state,
)
from .steps import done_prompt

if TYPE_CHECKING:
    from .outcome import Outcome

_T = TypeVar("_T")

__all__ = ["Wizard", "advance", "apply_answer", "step_kind"]


def _outcomes() -> Callable[..., Outcome]:
    """`outcome.build_outcome`, imported when a confirmed setup's outcome is built.

    The module holds the typed run request, which a step that only asks the next
    question never needs.
    """
    from . import outcome

    return outcome.build_outcome


# ---------------------------------------------------------------------------- the machine


def _blocked(ctx: StepContext, prompt: Prompt, found: Blocker | None) -> Prompt:
    """`prompt` as a `blocked` prompt: nothing selectable, and why, with what to do."""
    if found is None:
        reasons = [o.disabled_reason for o in prompt.options if o.disabled_reason]
        found = Blocker(tuple(reasons[:1]), reasons[0] if reasons else "")
    advice = found.advice or ctx.text.get("blocked.nothing")
    options = tuple(
        o if not o.selectable else replace(o, disabled_reason=advice) for o in prompt.options
    )
    meta: PromptMeta = {**prompt.meta}
    meta["blocked"] = {"lines": list(found.lines), "advice": advice}
    return replace(
        prompt,
        kind="blocked",
        options=options,
        default=None,
        label=ctx.text.get("blocked.label"),
        help=ctx.text.get("blocked.help", advice=advice),
        meta=meta,
    )


def _finish(ctx: StepContext, state: WizardState, prompt: Prompt) -> Prompt:
    """Say why no team can be formed (instead of walking on), and what was rewound."""
    try:
        found = team_blocker(ctx, state)
    except OkstraError as exc:  # a setup okstra cannot read a team from: say why
        found = Blocker((exc.message,), exc.message)
    if found is not None or (
        prompt.kind == "pick" and all(o.disabled_reason is not None for o in prompt.options)
    ):
        prompt = _blocked(ctx, prompt, found)
    note = state.stale
    if note is not None:
        meta: PromptMeta = {**prompt.meta}
        meta["stale"] = {"step": note.step, "answer": note.answer, "reason": note.reason}
        prompt = with_notes(
            replace(prompt, meta=meta),
            [ctx.text.get("stale.note", step=note.step, answer=note.answer, reason=note.reason)],
        )
    return prompt


def _accepted_default(prompt: Prompt, state: WizardState) -> str | None:
    """The default `accept_defaults` takes on a model prompt, or None."""
    default = prompt.default
    option = next((o for o in prompt.options if o.value == default), None)
    if default is None or option is None or option.disabled_reason is not None:
        return None
    if state.remembered_answers.get(prompt.id) == default:
        return default
    return default if str(option.meta.get("provenance") or "").startswith("default:") else None


def advance(ctx: StepContext, state: WizardState) -> Prompt:
    """The prompt to ask now. May rewind an answer that no longer holds (see `revalidate`)."""
    if not state.aborted:
        revalidate(ctx, state)
    if state.aborted or state.confirmed is True:
        return done_prompt(ctx, state)
    for step in steps(ctx, state):
        if not state.is_answered(step.id) and step.applies(ctx, state):
            return _finish(ctx, state, step.build(ctx, state))
    return done_prompt(ctx, state)


def apply_answer(
    ctx: StepContext,
    state: WizardState,
    answer: str,
    step: str | None = None,
    *,
    asked: Prompt | None = None,
) -> tuple[str, Prompt]:
    """Submit `answer` to the current prompt of `state` (a working copy).

    Args:
        ctx: the step context.
        state: the working copy, changed in place.
        answer: the option value or the text.
        step: when given, the step id the answer is meant for; a mismatch is refused
            (answers files, out-of-order role-model answers).
        asked: the prompt `advance` just gave for this very state (the previous
            answer's next prompt, in a replay), so it is not worked out twice.

    Returns:
        (echo, next prompt).

    Raises:
        AnswerRefused: the answer does not fit; the caller discards the copy.
    """
    prompt = asked if asked is not None else advance(ctx, state)
    if step is not None and step != prompt.id:
        problem = out_of_order(ctx, state, step)
        raise problem or refuse(ctx, "wrong_step", step=step, current=prompt.id)
    if prompt.kind == "done":
        raise refuse(ctx, "finished")
    if prompt.kind == "blocked":
        raise refuse(ctx, "blocked", reason=prompt.meta.get("blocked", {}).get("advice", ""))
    label = answer
    option: Option | None = None
    if prompt.kind == "pick":
        option = prompt.option(answer)
        if option is None:
            raise refuse(
                ctx,
                "not_an_option",
                answer=answer,
                options=", ".join(o.value for o in prompt.selectable),
            )
        if option.disabled_reason is not None:
            raise refuse(ctx, "option_disabled", answer=answer, reason=option.disabled_reason)
        label = option.label
    state.stale = None
    if prompt.id == EDIT_TARGET:
        rewind(ctx, state, answer)
        echo = render_echo(prompt.echo_template, answer, label)
        return echo, advance(ctx, state)
    current = _step(ctx, state, prompt.id)
    position = len(state.answered)
    stored = current.submit(ctx, state, answer, prompt)
    stored_answer = stored if prompt.kind == "text" else answer
    provenance = CHOSEN
    scope = option.meta.get("provenance", "") if option is not None else ""
    if answer == prompt.default and scope.startswith("default:"):
        # Taking the offered default records where that default came from.
        provenance = scope
    if current.role_block and prompt.id not in state.role_selection_order:
        state.role_selection_order.append(prompt.id)
    echo_label = label if prompt.kind == "pick" else stored_answer
    echo = render_echo(prompt.echo_template, stored_answer, echo_label)
    state.answered.insert(
        position,
        AnsweredStep(step=prompt.id, answer=stored_answer, provenance=provenance, echo=echo),
    )
    state.remembered_answers.pop(prompt.id, None)
    return echo, advance(ctx, state)


def _step(ctx: StepContext, state: WizardState, step_id: str) -> Step:
    for step in steps(ctx, state):
        if step.id == step_id:
            return step
    raise AssertionError(f"no step {step_id!r}")  # the prompt came from this list


# ---------------------------------------------------------------------------- re-validation


def _team_holds(ctx: StepContext, state: WizardState) -> bool:
    """Fast path: every answer of the task type and role steps still holds.

    Exact: each such answer was selectable when a complete team extended the answers
    before it, so when the answers so far (open counts at their minimum) can still be
    completed, every one of them would still be selectable.
    """
    if not state.task_type:
        return True
    try:
        profile = ctx.profile(state.task_type)
        check_counts(profile, state.role_counts)
        plan = {s.id for s in steps(ctx, state)}
        if any(is_role_step(e.step) and e.step not in plan for e in state.answered):
            return False
        ctx.host(state.host_runtime)
        return team_blocker(ctx, state) is None
    except OkstraError:
        return False


def revalidate(ctx: StepContext, state: WizardState) -> StaleNote | None:
    """Rewind the first answer that no longer holds, recording why (`state.stale`).

    The profile, the providers, the host or the availability may have changed since
    the answers were given (a CLI uninstalled, a role removed, a maximum lowered). The
    task type and every role step are checked in order: the first answer that is no
    longer a selectable option of its prompt — rebuilt from the answers before it —
    is rewound with its reason. A wizard with no complete team at all for any answer
    keeps its answers and its prompt says why (`blocked`).
    """
    if _team_holds(ctx, state):
        return None
    if state.task_type:
        try:
            ctx.profile(state.task_type)
        except OkstraError as exc:  # its profile file is gone
            return _rewound(ctx, state, TASK_TYPE, state.task_type, exc.message)
    plan = steps(ctx, state)
    known = {s.id for s in plan}
    for gone in state.answered:
        # A role that left the profile: said by name, never dropped silently. (An
        # ordinal beyond a lowered count is caught at its count step below.)
        parsed = parse_role_step(gone.step)
        if parsed is None or gone.step in known:
            continue
        if _removed(ctx, state, parsed.role):
            return _rewound(ctx, state, gone.step, gone.answer, _gone(ctx, state, parsed.role))
        if parsed.kind != ROLE_MODEL:  # the role's count is no longer asked this way
            reason = ctx.text.get("stale.not_asked", step=gone.step, task_type=state.task_type)
            return _rewound(ctx, state, gone.step, gone.answer, reason)
    for step in plan:
        if step.id != TASK_TYPE and not step.role_block:
            continue
        entry = state.entry(step.id)
        if entry is None:
            continue
        answer = _held(state, step.id, entry.answer)
        before = state.copy()
        rewind(ctx, before, step.id)
        before.stale = None
        try:
            prompt = step.build(ctx, before)
        except OkstraError as exc:
            return _rewound(ctx, state, step.id, answer, exc.message)
        option = prompt.option(answer)
        if option is None:
            reason = ctx.text.get("stale.not_an_option", answer=answer)
            return _rewound(ctx, state, step.id, answer, reason)
        if option.disabled_reason is not None:
            if team_blocker(ctx, before) is not None:
                # No answer here can hold: keep the answers, and have the prompt say
                # why (a confirmed wizard is confirmed no longer).
                if state.confirmed is True:
                    rewind(ctx, state, CONFIRM)
                return None
            return _rewound(ctx, state, step.id, answer, option.disabled_reason)
    return _stray_counts(ctx, state, plan)


def _held(state: WizardState, step_id: str, answer: str) -> str:
    """The value a role step's answer stands for in the state (what the team uses)."""
    parsed = parse_role_step(step_id)
    if parsed is None or parsed.kind == LEADER_SESSION:
        return answer
    if parsed.kind == ROLE_MODEL:
        models = state.role_models.get(parsed.role, [])
        return models[parsed.ordinal - 1] if parsed.ordinal <= len(models) else answer
    count = state.role_counts.get(parsed.role)
    return answer if count is None else str(count)


def _stray_counts(ctx: StepContext, state: WizardState, plan: list[Step]) -> StaleNote | None:
    """Counts or models no answer explains (a hand-edited file) are rewound with the
    role steps, naming what is wrong."""
    try:
        check_counts(ctx.profile(state.task_type), state.role_counts)
        team_blocker(ctx, state)
    except OkstraError as exc:
        first = next((s.id for s in plan if s.role_block), None)
        if first is not None:
            return _rewound(ctx, state, first, "", exc.message)
    return None


def _removed(ctx: StepContext, state: WizardState, role: str) -> bool:
    try:
        profile = ctx.profile(state.task_type)
    except OkstraError:
        return True
    return role != "leader" and profile.role(role) is None


def _gone(ctx: StepContext, state: WizardState, role: str) -> str:
    try:
        profile = ctx.profile(state.task_type)
    except OkstraError as exc:
        return exc.message
    if profile.role(role) is None and role != "leader":
        return ctx.text.get("stale.role_removed", role=role, task_type=state.task_type)
    return ctx.text.get("stale.beyond_count", role=role)


def _rewound(
    ctx: StepContext, state: WizardState, step_id: str, answer: str, reason: str
) -> StaleNote:
    rewind(ctx, state, step_id)
    note = StaleNote(step=step_id, answer=answer, reason=reason)
    state.stale = note
    state.confirmed = None
    return note


# ---------------------------------------------------------------------------- loading


def _read_state_bytes(path: Path) -> tuple[bytes, Any]:
    data = read_bytes(path, what="wizard state file", error=StateFileError)
    raw = parse_json_object(data, path, what="wizard state JSON object", error=StateFileError)
    return data, raw


@dataclass(frozen=True)
class _Loaded:
    """A state file as opened: where from, where it is saved, and its state."""

    source: Path  # the file the person named
    path: Path  # the v2 file written (the companion of a v1 source)
    state: WizardState
    legacy: bool
    notes: tuple[str, ...] = ()
    data: bytes | None = None  # the bytes a v2 state was parsed from


def _load(
    source: Path,
    environment: Environment,
    ctx: StepContext | None = None,
    *,
    redirected: bool = False,
) -> _Loaded:
    data = read_bytes(source, what="wizard state file", error=StateFileError)
    cache = user_dirs(environment.env).cache
    known = recall_state(source, data, cache)
    if known is not None:  # the very bytes an okstra process wrote or checked
        return _Loaded(source, source, known, legacy=False, data=data)
    raw = parse_json_object(data, source, what="wizard state JSON object", error=StateFileError)
    try:
        version = classify_version(raw)
    except StateFileError as exc:
        raise StateFileError(exc.message, path=source, field=exc.field) from None
    from . import legacy  # only for bytes no okstra process checked (a step never needs it)

    # The earlier okstra's v2 shape is converted like a v1 file (never written).
    if version == 2 and not legacy.is_earlier_v2(raw):
        state = parse_v2(raw, str(source))
        remember_state(source, data, state, cache)
        return _Loaded(source, source, state, legacy=False, data=data)
    origin = None if redirected else legacy.earlier_companion_source(raw, source)
    if origin is not None:
        return _load(origin, environment, ctx, redirected=True)
    project_root = raw.get("project_root")
    context = ctx or StepContext(
        environment, Path(project_root) if isinstance(project_root, str) and project_root else None
    )
    opened = legacy.open_legacy(
        source,
        profile_loader=context.catalog.profile,
        pool=context.pool,
        scopes=context.scopes,
        environment=environment,
    )
    state = parse_v2(opened.state, str(opened.companion))
    return _Loaded(source, opened.companion, state, legacy=True, notes=opened.notes)


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


def _new_state(
    env: Environment,
    project_root: Path | str,
    host: str | None,
    entry_mode: str | None,
    task_type: str | None,
    available_functions: Sequence[str],
) -> tuple[StepContext, WizardState]:
    """The state of a new wizard (not written) and the context it was checked with."""
    root = Path(project_root).expanduser()
    if not root.is_dir():
        raise UsageError("project root is not a directory", path=root, field="--project-root")
    root = root.resolve()
    ctx = StepContext(env, root)
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
    return ctx, state


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


@dataclass(frozen=True)
class WizardView:
    """What `show` prints, from one load: prompt, confirmation, history, progress."""

    prompt: Prompt
    confirmation: Confirmation
    history: list[HistoryEntry]
    progress: tuple[int, int]


def _replay(
    ctx: StepContext, current: WizardState, entries: Iterable[AnswerEntry]
) -> tuple[WizardState, ReplayResult]:
    """Apply `entries` to a copy of `current` (see `Wizard.replay`); one context for all.

    One context serves the whole replay: it caches what does not change between the
    answers of one transaction (catalog, text, pool, scopes, the project's tasks), and
    its memoised teams are keyed by the answers they were built for.
    """
    applied = 0
    echo = ""
    nxt: Prompt | None = None
    work = current.copy()
    for index, entry in enumerate(entries):
        if work.answer_of(entry.step) == entry.answer:
            applied += 1
            continue
        trial = work.copy()
        try:
            # `nxt` was worked out for `work` as it is (`trial` equals it): reuse it.
            echo, nxt = apply_answer(ctx, trial, entry.answer, entry.step, asked=nxt)
        except AnswerRefused as exc:
            return work, ReplayResult(
                applied, echo, nxt or advance(ctx, work.copy()), exc.message, index
            )
        work = trial
        applied += 1
    return work, ReplayResult(applied, echo, nxt or advance(ctx, work.copy()))


class Wizard:
    """One wizard state file and the operations on it.

    Attributes:
        path: the v2 file this wizard writes (a companion file for a v1 source).
        source: the file that was opened (the v1 file for a legacy wizard).
        legacy: True when opened from a file of the earlier okstra (v1, or its v2 shape).
        notes: what converting that file changed or skipped (empty otherwise).
    """

    def __init__(self, loaded: _Loaded, environment: Environment) -> None:
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
        _ctx, state = _new_state(
            env, project_root, host, entry_mode, task_type, available_functions
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
        with FileLock(self.path):
            # Another process may have written since we read: start from the disk.
            if self.path.exists() or self.legacy:
                self._reload()
            yield self._state

    def _reload(self) -> None:
        if not self.legacy and self._data is not None:
            data = read_bytes(self.source, what="wizard state file", error=StateFileError)
            if data == self._data:
                return  # the very bytes this state was parsed from: nothing to check again
        loaded = _load(self.source, self.environment)
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
            history=self._history(ctx, work),
            progress=self._progress(ctx, work),
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

    def accept_defaults(self) -> Prompt:
        """Answer this model step and the next ones with their defaults.

        A default is a default candidate (project, global or okstra's) that can be
        chosen here, or what the person chose before a rewind — not the first model
        that merely happens to be selectable (the person chooses that one). Stops at
        the first model step without such a default and at the first step that is not
        a model step; each accepted answer is saved as `submit` saves it.

        Raises:
            AnswerRefused: the current step has no default to accept (nothing saved).
        """
        ctx, work, prompt = self._current()
        accepted = 0
        while prompt.meta.get("stepKind") == "role_model":
            default = _accepted_default(prompt, work)
            if default is None:
                break
            try:
                prompt = self.submit(default, step=prompt.id).next
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
            work, result = _replay(self._ctx(current), current, entries)
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
        ctx, state = _new_state(env, project_root, host, entry_mode, task_type, ())
        work, result = _replay(ctx, state, entries)
        wizard = cls(_Loaded(path, path, work, legacy=False), env)
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
        return self._history(ctx, state)

    @staticmethod
    def _history(ctx: StepContext, state: WizardState) -> list[HistoryEntry]:
        out: list[HistoryEntry] = []
        for entry in state.answered:
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
        return [AnswerEntry(step=e.step, answer=e.answer) for e in self._current()[1].answered]

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

    def progress(self) -> tuple[int, int]:
        """(answered steps, total): the steps that apply, answered or still to ask.

        Exact once the counts are answered; before that, role counts not yet chosen
        count at their recommended value. The first number only goes down by what a
        rewind removes.
        """
        ctx, state, _prompt = self._current()
        return self._progress(ctx, state)

    @staticmethod
    def _progress(ctx: StepContext, state: WizardState) -> tuple[int, int]:
        answered = len(state.answered)
        if state.confirmed is True or state.aborted:
            return answered, answered
        remaining = 0
        if not state.task_type:
            remaining += 3  # a typical team before the profile is known: a count, two models
        for step in steps(ctx, state):
            if step.id == EDIT_TARGET or state.is_answered(step.id):
                continue
            try:
                if step.applies(ctx, state):
                    remaining += 1
            except OkstraError:
                remaining += 1
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
    sidecar. A v1 file is never changed by okstra and a file that does not
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
        from . import legacy

        if version != 2 or legacy.is_earlier_v2(raw):
            raise UsageError(
                "a wizard state file of the earlier okstra (v1, or its v2 shape) is never "
                "changed by okstra: delete it yourself",
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
        project_root: the project the setup is for ("" when unknown: a broken file).
    """

    path: Path
    task: str
    task_type: str
    progress: tuple[int, int]
    updated_at: datetime | None
    legacy: bool
    status: str
    problem: str | None = None
    project_root: str = ""

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
            "projectRoot": self.project_root or None,
        }


# A last-save time outside these years is tampered with (or a broken clock): unknown.
_YEARS = range(1970, 10000)


def _parse_time(value: str) -> datetime | None:
    """An aware, usable time, or None (missing, malformed, no offset, absurd year)."""
    try:
        parsed = datetime.fromisoformat(value) if value else None
    except ValueError:
        return None
    if parsed is None or parsed.tzinfo is None or parsed.year not in _YEARS:
        return None
    try:
        parsed.timestamp()
        parsed.astimezone()
    except (OverflowError, OSError, ValueError):
        return None
    return parsed


def _file_time(path: Path) -> datetime | None:
    """The file's own modification time (the link's, for a dangling link), or None."""
    try:
        return datetime.fromtimestamp(path.lstat().st_mtime).astimezone()
    except (OSError, OverflowError, ValueError):
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
            # One bad entry (a FIFO, a dangling link, tampered numbers) is listed as
            # broken with why; the others are still listed.
            out.append(
                WizardSummary(path, "", "", (0, 0), _file_time(path), False, "broken", exc.render())
            )
            continue
        state = wizard._state
        source = state.legacy_source
        if not wizard.legacy and source is not None and Path(source.path).exists():
            continue
        if wizard.source != path:
            continue  # an earlier okstra's companion: listed as its source file
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
                project_root=str(state.project_root or ""),
            )
        )

    def newest(summary: WizardSummary) -> tuple[float, str]:
        # Newest first; a file without a readable time sorts last.
        when = summary.updated_at
        return (-when.timestamp() if when is not None else float("inf"), summary.path.name)

    out.sort(key=newest)
    return out
