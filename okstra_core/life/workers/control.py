"""`okstra worker wait|result|stop|diff|merge|discard` and attaching to a worker's pane.

`wait` polls each worker's `exit.json` and processes with a growing pause (20 ms to
0.5 s). Its exit status is the first non-zero of the named workers (128+N for signal
N, 1 for `lost`), 124 on timeout; with `until` (an activity; `idle` also reaches
`waiting for input`) a worker reaching it counts as done with 0. `stop` signals only
what okstra started: the CLI's group while its pid keeps its recorded start time
(SIGTERM, SIGKILL after the grace), and closes a pane only while it is the supervisor's.
A writer's role execution holds its `worktreePath`, `branch` and `baseCommit`: `diff` is
against that base, committed or not; a merge or discard waits for its end and is recorded
on the role execution and in the timeline.
"""

from __future__ import annotations

import contextlib
import functools
import signal
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ...catalog.activity import reached
from ...documents.worker import WorkerDiscarded, WorkerMerged
from ...environment import Environment
from ...errors import FileSystemError, OkstraError, UsageError
from ...processes.process import Identity
from ...processes.tmux import inside_socket, pane_state, server_at
from ...records import config, dataclass
from .. import worktrees
from . import files, observe, record
from .record import read_manifest
from .team import WHO_ARG, Member, WorkerAnswer, find, members

EXIT_TIMEOUT = 124
EXIT_LOST = 1
_PAUSE_FIRST = 0.02
_PAUSE_MAX = 0.5


def _pauses(sleep: Callable[[float], None]) -> Callable[[], None]:
    pause = [_PAUSE_FIRST]

    def wait() -> None:
        sleep(pause[0])
        pause[0] = min(_PAUSE_MAX, pause[0] * 1.5)

    return wait


def exit_code(state: observe.WorkerState) -> int:
    """A worker's exit status as a process exit status."""
    if state.signal is not None:
        return 128 + state.signal
    if state.exit_status is not None:
        return state.exit_status if 0 <= state.exit_status < 256 else 1
    return EXIT_LOST if state.state == "lost" else 1


def _named(run_dir: Path, whos: Sequence[str]) -> list[Member]:
    team = observe.read_team(run_dir)
    named: list[Member] = []
    for who in whos:
        member = find(team, who)
        if member.status == "prepared":
            raise UsageError(
                f"{member.short} was never started (start it with `okstra worker start`)",
                field=WHO_ARG,
            )
        if member.ref not in (m.ref for m in named):
            named.append(member)
    return named


def _current(run_dir: Path, ref: str) -> Member:
    return next(m for m in observe.read_team(run_dir) if m.ref == ref)


def _check(run_dir: Path, member: Member, environment: Environment) -> Member:
    """The member after one look: its end recorded if it ended (cheap while it runs)."""
    if member.status != record.RUNNING:
        return member
    if not files.has_exit(run_dir, member.ref) and observe._alive(member):
        return member
    return observe.end_seen_or_looked(run_dir, member, environment)


@dataclass(frozen=True, kw_only=True)
class Waited:
    """What `wait` saw (its JSON document)."""

    __pydantic_config__ = config(camel_case=True)

    ok: bool
    timed_out: bool
    exit_code: int
    workers: tuple[observe.WorkerState, ...]
    until: str | None = None
    reached: tuple[str, ...] = ()


def _reached(run_dir: Path, member: Member, until: str, environment: Environment) -> bool:
    (state,) = observe.with_activity(
        run_dir, [observe.state_of(run_dir, member, environment.now())], environment
    )
    return reached(state.activity, until)


def wait(
    run_dir: Path,
    whos: Sequence[str],
    environment: Environment,
    *,
    timeout: float | None = None,
    any_one: bool = False,
    until: str | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> Waited:
    """Block until the named workers (the first, with `any_one`) end or reach `until`."""
    pending = _named(run_dir, whos)
    order = [m.ref for m in pending]
    done: dict[str, Member] = {}
    arrived: list[str] = []
    deadline = None if timeout is None else time.monotonic() + timeout
    pause = _pauses(sleep)
    while True:
        for member in list(pending):
            now = _check(run_dir, member, environment)
            if now.status in record.ENDED or (
                until is not None and _reached(run_dir, now, until, environment)
            ):
                done[now.ref] = now
                pending.remove(member)
                if now.status not in record.ENDED:
                    arrived.append(now.ref)
            else:
                pending[pending.index(member)] = now
        finished = (any_one and done) or not pending
        timed_out = not finished and deadline is not None and time.monotonic() >= deadline
        if finished or timed_out:
            break
        pause()
    if done:
        # The event is appended after the manifest under the run's lock: once it is free,
        # both are written (a read-only project has no lock and recorded nothing).
        with contextlib.suppress(FileSystemError), record.run_lock(run_dir):
            pass
    clock = environment.now()
    over = {ref: m for ref, m in done.items() if m.status in record.ENDED}
    states = [
        observe.state_of(run_dir, over.get(ref) or _current(run_dir, ref), clock) for ref in order
    ]
    states = observe.with_activity(run_dir, states, environment)
    if timed_out:
        code = EXIT_TIMEOUT
    else:
        ended = [s for s in states if s.ended and s.role_execution_ref not in arrived]
        codes = [exit_code(s) for s in ended if s.role_execution_ref in done]
        code = next((c for c in codes if c != 0), 0)
    return Waited(
        ok=code == 0,
        timed_out=timed_out,
        exit_code=code,
        workers=tuple(states),
        until=until,
        reached=tuple(arrived),
    )


@dataclass(frozen=True, kw_only=True)
class Result(WorkerAnswer):
    """What a worker produced: its result file, else its standard output."""

    status: str
    source: str
    path: str
    text: str
    finished: bool = True


def result(
    run_dir: Path, who: str, environment: Environment, *, turn: int | None = None
) -> tuple[Result, bytes]:
    """The worker's product (`{result_file}`, else its stdout) of its latest turn or of
    turn `turn`; UsageError when never started, still running, or no such turn."""
    member = _check(run_dir, _named(run_dir, [who])[0], environment)
    launch = files.read_launch(run_dir, member.ref)
    if turn is not None and not 1 <= turn <= launch.turn:
        raise UsageError(
            f"{member.short} has had {launch.turn} turn(s): expected 1 to {launch.turn}",
            field="--turn",
        )
    if turn is not None and turn < launch.turn:
        source, path, data = files.read_turn_result(
            run_dir, member.ref, turn, result_file=launch.result_file is not None
        )
    elif member.status == record.RUNNING:
        raise UsageError(
            f"{member.short} is still running; `okstra worker wait` for it first", field=WHO_ARG
        )
    else:
        source, path, data = files.read_result(
            run_dir, member.ref, result_file=launch.result_file is not None
        )
    state = observe.state_of(run_dir, member, environment.now())
    return (
        Result(
            role_execution_ref=member.ref,
            label=member.label,
            status=state.status,
            source=source,
            path=str(path),
            text=data.decode("utf-8", errors="replace"),
            finished=state.state == "exited" and state.signal is None,
        ),
        data,
    )


@dataclass(frozen=True, kw_only=True)
class Stopped:
    """What `stop` did (its JSON document)."""

    __pydantic_config__ = config(camel_case=True)

    ok: bool
    was_running: bool
    steps: tuple[str, ...]
    worker: observe.WorkerState


def _until(check: Callable[[], bool], seconds: float, sleep: Callable[[float], None]) -> bool:
    deadline = time.monotonic() + seconds
    pause = _pauses(sleep)
    while not check():
        if time.monotonic() >= deadline:
            return False
        pause()
    return True


def _cli(run_dir: Path, ref: str) -> Identity | None:
    member = _current(run_dir, ref)
    return Identity.of(member.participant.process_id, member.participant.process_start)


def stop(
    run_dir: Path,
    who: str,
    environment: Environment,
    *,
    grace: float = 10.0,
    sleep: Callable[[float], None] = time.sleep,
) -> Stopped:
    """SIGTERM to the worker CLI's group, SIGKILL after `grace`; close its tmux pane."""
    member = _check(run_dir, _named(run_dir, [who])[0], environment)
    if member.status != record.RUNNING:
        state = observe.state_of(run_dir, member, environment.now())
        return Stopped(ok=True, was_running=False, steps=(), worker=state)
    now = environment.now().isoformat(timespec="seconds")
    record.record_stop_requested(run_dir, member.participant_ref, now=now)
    steps: list[str] = []
    ref = member.ref
    ended = functools.partial(files.has_exit, run_dir, ref)
    # A supervisor that has just started records its CLI in a moment.
    _until(lambda: _cli(run_dir, ref) is not None or ended(), 5.0, sleep)
    cli = _cli(run_dir, ref)
    if cli is not None and cli.signal_group(signal.SIGTERM):
        steps.append(f"sent SIGTERM to process group {cli.pid}")
        if not _until(ended, grace, sleep) and cli.signal_group(signal.SIGKILL):
            steps.append(f"sent SIGKILL to process group {cli.pid}")
    _until(lambda: ended() or not observe._alive(_current(run_dir, ref)), 5.0, sleep)
    member = _check(run_dir, _current(run_dir, member.ref), environment)
    steps += _close_pane(member, environment)
    state = observe.state_of(run_dir, _current(run_dir, member.ref), environment.now())
    return Stopped(ok=state.ended, was_running=True, steps=tuple(steps), worker=state)


def _close_pane(member: Member, environment: Environment) -> list[str]:
    pane = member.participant.pane_ref
    server = server_at(member.participant.tmux_socket, environment)
    owner = Identity.of(member.participant.parent_process_id, member.participant.parent_start)
    if pane is None or server is None or pane_state(server, pane, owner) is None:
        return []
    done = server.run(["kill-pane", "-t", pane])
    return ["closed its pane"] if done is not None and done.returncode == 0 else []


@dataclass(frozen=True, kw_only=True)
class AttachTarget:
    """How to show a worker's pane: a tmux argv (switch inside tmux, attach outside)."""

    argv: tuple[str, ...]
    switch: bool
    env: dict[str, str]
    label: str


def worker_attach(run_dir: Path, environment: Environment, who: str) -> AttachTarget:
    """The tmux command showing `who`'s pane (checked); OkstraError if none or gone."""
    (member,) = _named(run_dir, [who])
    pane = member.participant.pane_ref
    server = server_at(member.participant.tmux_socket, environment)
    owner = Identity.of(member.participant.parent_process_id, member.participant.parent_start)
    if pane is None or member.participant.launch_backend != "tmux":
        log = files.worker_dir(run_dir, member.ref) / files.OUTPUT
        raise OkstraError(f"{member.short} runs in the background, not in tmux; its output: {log}")
    if server is None or pane_state(server, pane, owner) is None:
        raise OkstraError(f"the tmux pane of {member.short} ({pane}) is gone")
    select = ["select-window", "-t", pane, ";", "select-pane", "-t", pane, ";"]
    inside = inside_socket(environment.env) == server.socket
    if inside:
        argv, env = server.argv([*select, "switch-client", "-t", pane]), dict(server.env)
    else:
        argv = server.argv([*select, "attach-session", "-t", pane])
        env = {k: v for k, v in environment.env.items() if k not in ("TMUX", "TMUX_PANE")}
    return AttachTarget(argv=tuple(argv), switch=inside, env=env, label=member.label)


@dataclass(frozen=True)
class _Writer:
    member: Member
    path: Path
    branch: str
    base: str
    root: Path
    run_id: str

    def fields(self, **more: Any) -> dict[str, Any]:
        """The answer's fields about the writer (its ref, label and branch), and `more`."""
        ref, label = self.member.ref, self.member.label
        return {"role_execution_ref": ref, "label": label, "branch": self.branch} | more

    def event_fields(self) -> dict[str, Any]:
        """A timeline event's own fields about the writer (beside `fields`)."""
        return {"run_id": self.run_id, "participant_ref": self.member.participant_ref}


def _writer(run_dir: Path, who: str, environment: Environment | None = None) -> _Writer:
    """The writer `who` names, with its worktree (ends recorded first, given `environment`)."""
    if environment is not None:
        observe.observe_team(run_dir, environment)
    _, manifest = read_manifest(run_dir)
    member = find(members(manifest), who)
    execution = member.execution
    path, branch, base = execution.worktree_path, execution.branch, execution.base_commit
    if not path or not branch or not base:
        if member.status == "prepared":
            why = "it was never started"
        else:
            why = execution.tree_note or "it does not write: it ran in the project's tree"
        raise UsageError(f"{member.short} has no worktree of its own: {why}", field=WHO_ARG)
    return _Writer(member, Path(path), branch, base, Path(manifest.project_root), manifest.run_id)


def _ended(writer: _Writer, what: str) -> None:
    if writer.member.status == record.RUNNING:
        raise UsageError(
            f"{writer.member.short} is still running; wait for it (`okstra worker wait`) or "
            f"stop it before you {what} its branch",
            field=WHO_ARG,
        )
    if writer.member.execution.discarded_at:
        raise UsageError(f"{writer.member.short}'s branch was discarded", field=WHO_ARG)


@dataclass(frozen=True, kw_only=True)
class WorkerDiff(WorkerAnswer):
    """A writer's changes against its base (`--stat`: the summary only)."""

    branch: str
    base_commit: str
    worktree_path: str
    stat: bool
    text: str


def worker_diff(
    run_dir: Path, environment: Environment, who: str, *, stat: bool = False
) -> WorkerDiff:
    """The writer's committed and uncommitted changes against its base; UsageError when
    not a writer with a worktree, or its worktree and branch are gone."""
    writer = _writer(run_dir, who)
    text = worktrees.diff(
        writer.root, writer.path, writer.branch, writer.base, stat=stat, env=environment.env
    )
    return WorkerDiff(
        **writer.fields(base_commit=writer.base, worktree_path=str(writer.path), stat=stat),
        text=text,
    )


@dataclass(frozen=True, kw_only=True)
class WorkerMerge(WorkerAnswer):
    """A writer's branch merged into the project's branch."""

    branch: str
    into: str
    commit: str
    squash: bool
    files: tuple[str, ...]
    kept_leftovers: str | None = None


def worker_merge(
    run_dir: Path, environment: Environment, who: str, *, squash: bool = False
) -> WorkerMerge:
    """Merge the writer's branch (leftovers committed first) into the project's branch.
    Refused, nothing merged: UsageError (running, discarded, not a writer, no branch checked
    out, uncommitted changes to the same files) or MergeConflictError (the files named)."""
    writer = _writer(run_dir, who, environment)
    _ended(writer, "merge")
    env = environment.env
    kept = worktrees.commit_leftovers(writer.path, writer.member.label, env)
    tree = worktrees.project_tree(writer.root, env)
    if tree is None:
        raise UsageError(f"the project at {writer.root} is no longer a git checkout")
    done = worktrees.merge(
        tree, writer.branch, writer.base, writer.member.label, squash=squash, env=env
    )
    now = environment.now().isoformat(timespec="seconds")
    merged = writer.fields(into=done.into, commit=done.commit, squash=squash, files=done.files)
    event = WorkerMerged(at=now, **writer.event_fields(), **merged)
    changes = {"merged_at": now, "merge_commit": done.commit, "merged_into": done.into}
    record.record_tree(run_dir, writer.member.ref, changes, event, now=now)
    return WorkerMerge(**merged, kept_leftovers=kept)


@dataclass(frozen=True, kw_only=True)
class WorkerDiscard(WorkerAnswer):
    """A writer's worktree and branch removed."""

    branch: str
    steps: tuple[str, ...]


def worker_discard(run_dir: Path, environment: Environment, who: str) -> WorkerDiscard:
    """Remove the writer's worktree and branch; UsageError if running, discarded, no writer."""
    writer = _writer(run_dir, who, environment)
    _ended(writer, "discard")
    steps = worktrees.discard(writer.root, writer.path, writer.branch, environment.env)
    now = environment.now().isoformat(timespec="seconds")
    event = WorkerDiscarded(
        at=now, **writer.event_fields(), **writer.fields(worktree_path=str(writer.path))
    )
    record.record_tree(run_dir, writer.member.ref, {"discarded_at": now}, event, now=now)
    return WorkerDiscard(**writer.fields(steps=steps))
