"""The documents of a worker: `launch.json` (written by `worker start` before the supervisor
runs: all it needs to run and record the CLI), `exit.json` (written atomically by the
supervisor when the CLI ends, so the exit is known with no okstra running) and its
timeline events.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Self

import orjson

from ..records import aliases_of, config, dataclass
from .base import Document, Event, Shape
from .run import AddedExecution, Usage

if TYPE_CHECKING:
    from pydantic import StrictBool, StrictInt, StrictStr


# The worker surfaces: a tmux pane, or a detached process group logging to a file.
Surface = Literal["tmux", "background"]


@dataclass(frozen=True, kw_only=True)
class WorkerLaunch(Document):
    """`launch.json`: what one worker start runs, and how it is recorded.

    Attributes:
        run_dir: the run directory (absolute).
        role_execution_ref / participant_ref / label / role / provider / model_ref:
            who runs.
        argv: the exact argv of the CLI (its path resolved at start).
        env: the provider's extra environment for the CLI.
        cwd: the project root, where the CLI runs.
        surface: `tmux` or `background`.
        prompt_file / result_file / output_log / stdout_log: file names in the worker
            directory (`result_file` only when the argv template names one).
        session_id: the minted session id, when the template takes one.
        started_at: when the start was asked for (ISO).
        added: the participant and role execution this start adds (a new attempt or
            a dynamic role), as the run manifest holds them; None for a prepared one.
        worktree / branch / base_commit: a writer's own worktree (where `cwd` is),
            its branch and the commit it was made from; None for a worker in the
            project's tree, whose `tree_note` says why when it writes.
        log_limit: the most bytes each of its logs keeps.
        keep_pane: keep its tmux pane open after the CLI ends.
    """

    WHAT: ClassVar[str] = "worker launch"
    NESTED: ClassVar[Mapping[str, tuple[Shape, type[Document]]]] = {
        "added": ("one", AddedExecution)
    }

    run_dir: StrictStr
    role_execution_ref: StrictStr
    participant_ref: StrictStr
    label: StrictStr
    role: StrictStr
    provider: StrictStr
    model_ref: StrictStr | None
    argv: tuple[StrictStr, ...]
    env: dict[StrictStr, StrictStr]
    cwd: StrictStr
    surface: Surface
    prompt_file: StrictStr = "prompt.md"
    result_file: StrictStr | None = None
    output_log: StrictStr = "output.log"
    stdout_log: StrictStr = "stdout.log"
    session_id: StrictStr | None = None
    started_at: StrictStr
    added: AddedExecution | None = None
    worktree: StrictStr | None = None
    branch: StrictStr | None = None
    base_commit: StrictStr | None = None
    tree_note: StrictStr | None = None
    # The turn this launch runs (1: the start; `worker send` runs the next), and how to
    # find a session id the CLI mints (the provider's `worker_session_pattern`).
    turn: StrictInt = 1
    session_pattern: StrictStr | None = None
    # A worktree made without its files: the supervisor writes them before the CLI runs
    # (so `worker start` returns without waiting for the checkout).
    checkout_pending: StrictBool = False
    # How its CLI reports what a turn used, read from its standard output (the
    # provider's `[usage] format`); None: it reports nothing okstra reads.
    usage_format: StrictStr | None = None

    def tree_changes(self) -> dict[str, Any]:
        """The role execution's worktree fields (by their names in `RoleExecution`)."""
        values = {
            "worktree_path": self.worktree,
            "branch": self.branch,
            "base_commit": self.base_commit,
            "tree_note": self.tree_note,
        }
        return {k: v for k, v in values.items() if v is not None}

    # The most each log keeps (its oldest part dropped: `workers.supervise`), and whether
    # its tmux pane stays open after the CLI ends (`config.json`'s `team`).
    log_limit: StrictInt = 10 * 1024 * 1024
    keep_pane: StrictBool = False


@dataclass(frozen=True, kw_only=True)
class WorkerExit(Document):
    """`exit.json`: how the worker CLI ended, written once by its supervisor."""

    __pydantic_config__ = config(
        camel_case=True, by_name=True, omit_none=("detail", "usage", "session_id")
    )
    WHAT: ClassVar[str] = "worker exit record"
    NESTED: ClassVar[Mapping[str, tuple[Shape, type[Document]]]] = {"usage": ("one", Usage)}

    exit_status: StrictInt | None
    signal: StrictInt | None
    started_at: StrictStr
    exited_at: StrictStr
    process_id: StrictInt | None
    stop_requested: StrictBool = False
    detail: StrictStr | None = None
    # What its CLI reported the turn used (None: nothing, or nothing okstra could read).
    usage: Usage | None = None
    # The session id a CLI that mints its own printed (whoever records the end keeps it).
    session_id: StrictStr | None = None


@dataclass(frozen=True, kw_only=True)
class _WorkerEvent(Event):
    """A timeline event of one worker: its role execution, participant and label."""

    role_execution_ref: StrictStr
    participant_ref: StrictStr
    label: StrictStr


@dataclass(frozen=True, kw_only=True)
class WorkerStarted(_WorkerEvent):
    """A worker was started: on which surface, with which process and session."""

    __pydantic_config__ = config(
        camel_case=True,
        by_name=True,
        omit_none=("pane_ref", "window_ref", "output_log", "source_role_execution_ref"),
    )

    event: Literal["worker-started"] = "worker-started"
    role: StrictStr
    model_ref: StrictStr | None
    surface: StrictStr
    session_id: StrictStr | None = None
    supervisor_pid: StrictInt | None = None
    pane_ref: StrictStr | None = None
    window_ref: StrictStr | None = None
    output_log: StrictStr | None = None
    source_role_execution_ref: StrictStr | None = None


@dataclass(frozen=True, kw_only=True)
class WorkerExited(_WorkerEvent):
    """A worker ended (recorded once, by whoever saw it first)."""

    __pydantic_config__ = config(camel_case=True, by_name=True, omit_none=("detail",))

    event: Literal["worker-exited"] = "worker-exited"
    status: StrictStr
    exit_status: StrictInt | None = None
    signal: StrictInt | None = None
    exited_at: StrictStr
    last_lines: tuple[StrictStr, ...] = ()
    detail: StrictStr | None = None


@dataclass(frozen=True, kw_only=True)
class WorkerMerged(_WorkerEvent):
    """A writer's branch was merged into the project's branch (`okstra worker merge`)."""

    event: Literal["worker-merged"] = "worker-merged"
    branch: StrictStr
    into: StrictStr
    commit: StrictStr
    squash: StrictBool = False
    files: tuple[StrictStr, ...] = ()


@dataclass(frozen=True, kw_only=True)
class WorkerDiscarded(_WorkerEvent):
    """A writer's worktree and branch were removed (`okstra worker discard`)."""

    event: Literal["worker-discarded"] = "worker-discarded"
    branch: StrictStr
    worktree_path: StrictStr


@dataclass(frozen=True, kw_only=True)
class PaneActivity(Document):
    """`lead-activity.json`: what the lead's pane last showed, and since when.

    `digest` is the sha256 of the pane's last lines; a screen that waits for input
    with the same digest since `since` for the provider's `idle_after` is `idle`.
    """

    WHAT: ClassVar[str] = "pane activity"

    state: StrictStr
    digest: StrictStr
    since: StrictStr


@dataclass(frozen=True, kw_only=True)
class WatcherRecord(Document):
    """`watcher.json`: the run's watcher (`life.watch`), written by it alone.

    Attributes:
        process_id / process_start: the watcher process (its start time tells it from
            a later process with its pid).
        started_at: when it started (ISO).
        events: what it tells (`config.json`'s `notify` when it started).
        tty: the terminal of a foreground lead (its bell), when there was one.
        told: what it told, in order (`lead-waiting#1`, `worker-ended:<ref>@<start>`,
            `team-done`): each at most once, whoever watches next.
        seen: the ended turns of workers it knows of, told or not (`<ref>@<start>`).
        lead_waiting: the lead waited for input at its last look.
        waits: how many times the lead came to wait for input.
        looks: how many looks it made (each rewrites this record: a watcher that
            stopped looking is seen to).
        ended_at / end_reason: when and why it ended (`team done`, `stopped`, ...).
    """

    __pydantic_config__ = config(
        camel_case=True, by_name=True, omit_none=("tty", "ended_at", "end_reason")
    )
    WHAT: ClassVar[str] = "run watcher record"

    process_id: StrictInt
    process_start: StrictStr
    started_at: StrictStr
    events: tuple[StrictStr, ...]
    tty: StrictStr | None = None
    told: tuple[StrictStr, ...] = ()
    seen: tuple[StrictStr, ...] = ()
    lead_waiting: StrictBool = False
    waits: StrictInt = 0
    looks: StrictInt = 0
    ended_at: StrictStr | None = None
    end_reason: StrictStr | None = None


@dataclass(frozen=True, kw_only=True)
class ProjectRunsRow(Document):
    """A line of `.okstra/runs-index.jsonl`: one run as it was after a change.

    `run` is `<group>/<task>/runs/<run-id>` under `.okstra/tasks`; `worker_states`
    counts the run's workers by their participants' status (`{"exited": 3}`): all a
    listing asks of them is whether one runs, and a line stays short however large the
    team (each listing parses every line).
    """

    __pydantic_config__ = config(
        camel_case=True,
        by_name=True,
        omit_none=("leader", "entry_mode", "lead_session_id", "manifest_stamp"),
    )
    WHAT: ClassVar[str] = "runs index row"

    run: StrictStr
    run_id: StrictStr
    task_key: StrictStr
    task_type: StrictStr
    created_at: StrictStr | None
    team_size: StrictInt
    lead_status: StrictStr
    lead_backend: StrictStr | None
    worker_states: dict[StrictStr, StrictInt]
    updated_at: StrictStr | None = None
    # What `okstra runs` shows of a settled run without opening its manifest: the
    # leader participant as recorded, the run's entry mode and minted lead session id,
    # and the manifest's `<mtime_ns>:<size>` when the row was made (a manifest changed
    # since makes the row stale: it is made again from the manifest).
    leader: dict[StrictStr, Any] | None = None
    entry_mode: StrictStr | None = None
    lead_session_id: StrictStr | None = None
    manifest_stamp: StrictStr | None = None

    @classmethod
    def from_line(cls, line: bytes) -> Self | None:
        """The row one line of the index holds, or None (not JSON, not an object, a
        required field missing or of another type). Checked by JSON types, without
        pydantic: every listing reads the whole index (docs/performance.md)."""
        reader = _READERS.get(cls)
        if reader is None:
            reader = _READERS[cls] = _row_reader(cls)
        row: Self | None = reader(line)  # type: ignore[assignment]
        return row


_READERS: dict[type[ProjectRunsRow], Callable[[bytes], ProjectRunsRow | None]] = {}


# How a line of the runs index is checked when it is read: the fields a row cannot do
# without, each of its exact JSON type (and every count of workers a number); the others,
# absent, empty or of another type, are left out (`leader` is checked where it is read,
# `life.runinfo`, as from a manifest).
_REQUIRED: dict[str, type] = {
    "run": str, "run_id": str, "task_key": str, "task_type": str, "team_size": int,
    "lead_status": str, "worker_states": dict,
}  # fmt: skip
_OPTIONAL: dict[str, type] = {
    "created_at": str, "lead_backend": str, "updated_at": str, "leader": dict,
    "entry_mode": str, "lead_session_id": str, "manifest_stamp": str,
}  # fmt: skip
_COUNTS = {int}


def _row_reader(
    cls: type[ProjectRunsRow],
) -> Callable[[bytes], ProjectRunsRow | None]:
    names = aliases_of(cls)
    required_keys = tuple(names.get(n, n) for n in _REQUIRED)
    required_types = tuple(_REQUIRED.values())
    optional_keys = tuple(names.get(n, n) for n in _OPTIONAL)
    optional_types = tuple(_OPTIONAL.values())
    states_at = list(_REQUIRED).index("worker_states")

    def read(line: bytes) -> ProjectRunsRow | None:
        try:
            data = orjson.loads(line)
        except orjson.JSONDecodeError:
            return None
        if type(data) is not dict:
            return None
        required = list(map(data.get, required_keys))
        if tuple(map(type, required)) != required_types:
            return None
        states = required[states_at]
        if states and set(map(type, states.values())) != _COUNTS:
            return None
        optional = [
            v if type(v) is t and v != "" else None
            for v, t in zip(map(data.get, optional_keys), optional_types, strict=True)
        ]
        values: dict[str, Any] = dict(zip(_REQUIRED, required, strict=True))
        values.update(zip(_OPTIONAL, optional, strict=True))
        return cls(**values)

    return read
