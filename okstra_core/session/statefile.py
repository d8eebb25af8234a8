"""A wizard's state file on disk: where it lives, how it is opened, a new one, removal.

A v2 file okstra wrote is validated (or recalled from the state cache by its exact
bytes); a file of the earlier okstra (v1, or its own v2 shape) is converted in memory
(`okstra_core.compat`), its progress going to its companion. Nothing here locks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from ..catalog import detect_host, load_project_config
from ..compat.shapes import earlier_companion_source, is_earlier_v2
from ..environment import Environment
from ..errors import AnswerRefused, StateFileError, UsageError
from ..paths import prompts_root, user_dirs
from ..records import dataclass
from ..resolver import check_entry_mode
from ..setup_runs import runs_file
from ..store import lock_path_for, parse_json_object, read_bytes
from ..vocabulary import ENTRY_MODES, SPAWN_PROCESS
from ..wizard.base import StepContext, echo_template, render_echo
from ..wizard.engine import advance, apply_answer, default_to_accept
from ..wizard.ids import CONFIRM, CONFIRM_ANSWER, ROLE_MODEL_KIND, TASK_TYPE, parse_role_step
from ..wizard.state import (
    FILE_NAMES,
    AnsweredStep,
    WizardState,
    classify_version,
    parse_v2,
    recall_state,
    remember_state,
)


def _json_object(data: bytes, path: Path) -> Any:
    return parse_json_object(data, path, what="wizard state JSON object", error=StateFileError)


def read_state(path: Path) -> Any:
    """The file's JSON object (`StateFileError` naming the file)."""
    return _json_object(read_bytes(path, what="wizard state file", error=StateFileError), path)


def state_version(raw: dict[str, Any], path: Path) -> Literal[1, 2]:
    """`classify_version` with the file named in its error."""
    try:
        return classify_version(raw)
    except StateFileError as exc:
        raise StateFileError(exc.message, path=path, field=exc.field) from None


@dataclass(frozen=True)
class Loaded:
    """A state file as opened: where from, where it is saved, and its state."""

    source: Path  # the file the person named
    path: Path  # the v2 file written (the companion of a v1 source)
    state: WizardState
    legacy: bool
    notes: tuple[str, ...] = ()
    data: bytes | None = None  # the bytes a v2 state was parsed from


def load(source: Path, environment: Environment, *, redirected: bool = False) -> Loaded:
    """Open `source`: a v2 file as it is, an earlier okstra's file converted."""
    data = read_bytes(source, what="wizard state file", error=StateFileError)
    cache = user_dirs(environment.env).cache
    known = recall_state(source, data, cache)
    if known is not None:  # the very bytes an okstra process wrote or checked
        return Loaded(source, source, known, legacy=False, data=data)
    raw = _json_object(data, source)
    # The earlier okstra's v2 shape is converted like a v1 file (never written).
    if state_version(raw, source) == 2 and not is_earlier_v2(raw):
        state = parse_v2(raw, str(source))
        remember_state(source, data, state, cache)
        return Loaded(source, source, state, legacy=False, data=data)
    origin = None if redirected else earlier_companion_source(raw, source)
    if origin is not None:
        return load(origin, environment, redirected=True)
    root = raw.get("project_root")
    context = StepContext(environment, Path(root) if isinstance(root, str) and root else None)
    # The reader of the earlier okstra's files: a state file okstra wrote never needs it.
    from ..compat.opening import open_legacy

    opened = open_legacy(
        source,
        profile_loader=context.catalog.profile,
        pool=context.pool,
        scopes=context.scopes,
        environment=environment,
        host_provider=lambda host: _native_provider(context, host),
    )
    state = parse_v2(opened.state, str(opened.companion))
    notes = opened.notes
    if raw.get("confirmed") is True and not opened.resumed:
        # The earlier v2 shape left models to the defaults where `roleModels` has no
        # entry; a v1 file's empty fields were already read as the defaults.
        named = raw.get(FILE_NAMES["role_models"])
        state, more = _carry_confirmation(
            context, state, frozenset(named) if isinstance(named, dict) else None
        )
        notes = (*notes, *more)
    return Loaded(source, opened.companion, state, legacy=True, notes=notes)


def _native_provider(ctx: StepContext, host: str) -> str | None:
    """The host's own provider (None: it has none, or the host is unknown here)."""
    try:
        provider: str | None = ctx.catalog.host(host).native_provider
    except UsageError:
        return None
    return provider


def _carry_confirmation(
    ctx: StepContext, state: WizardState, named: frozenset[str] | None
) -> tuple[WizardState, list[str]]:
    """A file the earlier okstra saved confirmed is confirmed here too, as it was.

    Its answers are re-checked as a prompt checks them. A model of a role the file left
    to the defaults (not in `named`; None for a v1 file, which names them all) takes its
    default, as the earlier okstra ran with it; if then only the confirmation is left,
    it is answered with the conversion's provenance, else resumed with a note.
    """
    if state.aborted or state.confirmed is True:
        return state, []
    work = state.copy()
    prompt = advance(ctx, work)
    try:
        while prompt.id != CONFIRM:
            default = default_to_accept(prompt, work)
            parsed = parse_role_step(prompt.id)
            role = parsed.role if parsed is not None else None
            if (
                prompt.step_kind != ROLE_MODEL_KIND
                or default is None
                or named is None
                or role in named
            ):
                return state, [
                    f"the file was saved confirmed, but step {prompt.id!r} must be answered "
                    "again before it can be confirmed here"
                ]
            prompt = apply_answer(ctx, work, default, prompt.id, asked=prompt)[1]
        apply_answer(ctx, work, CONFIRM_ANSWER, CONFIRM, asked=prompt)
    except AnswerRefused as exc:
        return state, [f"the file was saved confirmed, but it cannot be confirmed: {exc.message}"]
    provenance = next(
        (e.provenance for e in state.answered if e.provenance.startswith("converted:")),
        "converted:v1",
    )
    work.answered = [
        replace(e, provenance=provenance) if e.step == CONFIRM else e for e in work.answered
    ]
    return work, []


def resolve_state_path(value: str, environment: Environment | None = None) -> Path:
    """Where `--state VALUE` points: a bare name is `<state dir>/wizards/<name>.json`
    (".json" added when missing); anything with a separator is a path."""
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


def new_state(
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
    mode = entry_mode or SPAWN_PROCESS
    if mode not in ENTRY_MODES:
        raise UsageError(
            f"unknown entry mode {mode!r}: expected {' or '.join(ENTRY_MODES)}",
            field="--entry-mode",
        )
    check_entry_mode(host_spec, mode)
    project = load_project_config(root)
    state = WizardState(
        role_counts={},
        role_models={},
        role_selection_order=[],
        workspace_root=str(prompts_root(env.env)),
        project_root=str(root),
        project_id=project.project_id or root.name,
        host_runtime=host_spec.id,
        host_entry_mode=mode,
        available_functions=list(available_functions),
    )
    if task_type:
        ctx.profile(task_type)  # refuses an unknown task type, naming the known ones
        state.task_type = task_type
        label = ctx.text.get("task_type.option.plain", task_type=task_type, title=task_type)
        echo = render_echo(echo_template(ctx, "task_type"), task_type, label)
        state.answered.append(AnsweredStep(step=TASK_TYPE, answer=task_type, echo=echo))
    return ctx, state


def unanswered(state: WizardState) -> bool:
    """A v2 state nobody has answered anything in (nothing worth keeping)."""
    return (
        state.legacy_source is None
        and not state.answered
        and not state.remembered_answers
        and not state.aborted
        and state.confirmed is not True
    )


def remove_state_file(path: Path) -> None:
    """Remove the file, its `.lock` sidecar and its record of prepared runs (+ lock).

    The caller holds the lock; state locks fail fast, so no process waits on the
    sidecar's inode (else every removed wizard would leave a stray `.lock`).
    """
    for gone in (path, runs_file(path)):
        gone.unlink(missing_ok=True)
        lock_path_for(gone).unlink(missing_ok=True)
