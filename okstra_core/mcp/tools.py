"""The MCP tools of one run: each a thin adapter over one `life.actions` function.

Each tool takes exactly the arguments its schema lists, runs its action on a worker
thread (actions block on files, processes and the run's lock, never on the event loop)
and answers the action's record as structured content plus a short text; a refusal is
a tool error carrying the CLI's message and JSON error. `worker_wait` waits at most one
slice per call (below every host's timeout), reporting progress; the lead calls again.

Beside it, each tool answers a short text an agent reads first: one line per member or
per fact, the next step named; every value that comes from a file or a worker's output
is made inert (no control characters, no escape sequences reach the host's screen).

The server runs on stdin/stdout (the SDK's `MCPServer`): input schemas are the SDK's from
the tools' signatures, made exact (no undeclared argument); output schemas are the action
records' JSON Schemas. Stdout carries only the protocol; the log (warnings) goes to
stderr. It ends when the client closes stdin.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from .. import __version__
from ..display import elapsed, inert
from ..environment import Environment
from ..errors import FileSystemError, OkstraError, UsageError, describe_os_error
from ..life import actions
from ..life.actions import (
    Finalized,
    Started,
    Stopped,
    TeamStatus,
    Waited,
    WorkerDiff,
    WorkerDiscard,
    WorkerMerge,
    WorkerResult,
)
from ..life.limits import MAX_GRACE_SECONDS, MAX_PROMPT_BYTES
from ..life.report import read_run_manifest
from ..life.workers.observe import WorkerState
from ..life.workers.usage import usage_text
from ..records import json_schema, to_data

MAX_SLICE_SECONDS = 3600.0
# How often a waiting call reports progress (and looks again).
PROGRESS_SECONDS = 2.0
MAX_WHO = 200
MAX_NAMED = 100


def _words(description: str, longest: int = MAX_WHO) -> Any:
    """A non-empty string argument of at most `longest` characters."""
    return Field(min_length=1, max_length=longest, description=description)


def _seconds(longest: float, description: str) -> Any:
    """A number of seconds from 0 to `longest`."""
    return Field(ge=0, le=longest, description=description)


WHO_TEXT = (
    "a worker of this run: its role execution ref, its label, or <role>#<n> (e.g. analyser#1)"
)
Who = Annotated[str, _words(WHO_TEXT)]
PROMPT_TEXT = "the worker's whole task: all it knows (it reads it on standard input)"
Prompt = Annotated[str, _words(PROMPT_TEXT, MAX_PROMPT_BYTES)]
Surface = Annotated[
    Literal["tmux", "background"],
    Field(description="tmux (a pane to watch) or background; default: tmux when it runs"),
]
Seconds = Annotated[
    float, _seconds(MAX_SLICE_SECONDS, "the longest this call waits (capped at the server's slice)")
]
Again = Annotated[bool, Field(description="start a new attempt of a worker that already ran")]
Role = Annotated[str, _words("a dynamic role of the run")]
Model = Annotated[str, _words("with role: the model ref to run it on (e.g. codex/gpt-5.6-sol)")]
Until = Annotated[
    Literal["waiting for input", "idle", "stalled"],
    Field(description="also answer when one of them reaches this activity"),
]
AnyOne = Annotated[bool, Field(description="answer when the first of them ends")]
Full = Annotated[bool, Field(description="all of it (by default at most 1 MiB)")]
Turn = Annotated[int, Field(ge=1, le=100_000, description="an earlier turn (1: the first)")]
Stat = Annotated[bool, Field(description="the summary of files changed, not the diff")]
Squash = Annotated[bool, Field(description="one commit on the project's branch")]
Yes = Annotated[bool, Field(description="true once the person agreed to lose the work")]
GRACE_TEXT = "seconds it gets to stop before it is killed (capped at the slice)"
Grace = Annotated[float, _seconds(MAX_GRACE_SECONDS, GRACE_TEXT)]
DATA_TEXT = (
    "the final report's JSON data file, relative to the project root "
    "(e.g. final-report-<run-id>.json) or absolute inside it"
)
Data = Annotated[str, _words(DATA_TEXT, 4096)]


class Refused(Exception):
    """An `OkstraError` on its way out of a worker thread, as a tool error."""

    def __init__(self, error: OkstraError) -> None:
        super().__init__(error.render())
        self.error = error


def answer(record: Any, summary: str) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=summary)], structured_content=to_data(record)
    )


def refusal(error: OkstraError) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=refused(error))],
        structured_content=error.to_json(),
        is_error=True,
    )


class Team:
    """The tools of the run at `run_dir` (the only run this server acts on)."""

    def __init__(self, run_dir: Path, environment: Environment, *, slice_seconds: float) -> None:
        self.run_dir = run_dir
        self.environment = environment
        self.slice = slice_seconds

    async def _run(self, action: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """`action(run_dir, environment, *args, **kwargs)` on a worker thread."""
        call = functools.partial(action, self.run_dir, self.environment, *args, **kwargs)
        return await anyio.to_thread.run_sync(_guarded, call)

    async def _answer(
        self, summary: Callable[[Any], str], action: Callable[..., Any], *args: Any, **kwargs: Any
    ) -> CallToolResult:
        """Run `action` (see `_run`) and answer its record with `summary`'s text."""
        try:
            record = await self._run(action, *args, **kwargs)
        except Refused as exc:
            return refusal(exc.error)
        return answer(record, summary(record))

    # ------------------------------------------------------------------- tools

    async def team_status(self) -> CallToolResult:
        """Every member of this run's team now: label, model, access (read-only or
        workspace-write), surface, state (prepared, running, exited N, stopped, lost),
        activity, elapsed time and last line of output. Looks only; call it any time."""
        return await self._answer(team, actions.team_status)

    async def worker_start(
        self,
        prompt: Prompt,
        who: Who | None = None,
        again: Again = False,
        role: Role | None = None,
        model: Model | None = None,
        source: Who | None = None,
        surface: Surface | None = None,
    ) -> CallToolResult:
        """Start a worker with `prompt` as its whole task; returns at once. Name a
        prepared worker with `who` (`again: true` for a new attempt of one that ran),
        or a dynamic role of the run with `role` and `model` (a model ref such as
        codex/gpt-5.6-sol; `source`: the role execution it acts on). `surface`:
        tmux (a pane you can watch) or background; default tmux when tmux runs."""
        return await self._answer(
            started,
            actions.worker_start,
            prompt=prompt,
            who=who,
            again=again,
            role=role,
            model=model,
            source=source,
            surface=surface,
        )

    async def worker_send(
        self, who: Who, prompt: Prompt, surface: Surface | None = None
    ) -> CallToolResult:
        """Send an ended worker a follow-up in its own conversation (it remembers its
        earlier turns); returns at once, as worker_start does. Wait for it and read its
        answer as for a start."""
        return await self._answer(started, actions.worker_send, who, prompt=prompt, surface=surface)

    async def worker_wait(
        self,
        who: Annotated[list[Who], Field(min_length=1, max_length=MAX_NAMED)],
        ctx: Context,
        any: AnyOne = False,  # the name of the CLI's flag
        timeout: Seconds | None = None,
        until: Until | None = None,
    ) -> CallToolResult:
        """Wait until the named workers end (`any: true`: the first of them; `until`:
        or reach that activity, e.g. a worker waiting for input). One call
        waits at most `timeout` seconds (and never longer than this server's slice,
        50 s by default), reporting progress; if they still run it answers
        `timedOut: true` with each one's state: call it again to keep waiting."""
        limit = self.slice if timeout is None else min(timeout, self.slice)
        began = time.monotonic()
        try:
            while True:
                left = limit - (time.monotonic() - began)
                step = max(0.0, min(PROGRESS_SECONDS, left))
                found = await self._run(
                    actions.worker_wait, who, timeout=step, any_one=any, until=until
                )
                if not found.timed_out or left <= PROGRESS_SECONDS:
                    break
                spent = time.monotonic() - began
                await ctx.report_progress(spent, limit, progress(found, spent))
        except Refused as exc:
            return refusal(exc.error)
        return answer(found, waited(found))

    async def worker_result(
        self, who: Who, full: Full = False, turn: Turn | None = None
    ) -> CallToolResult:
        """What an ended worker produced: its final message (its result file, else its
        standard output) of its latest turn, or of `turn`. At most 1 MiB unless
        `full: true`; `truncated` and `path` say when there is more and where."""
        return await self._answer(result, actions.worker_result, who, full=full, turn=turn)

    async def worker_stop(self, who: Who, grace: Grace = 10.0) -> CallToolResult:
        """Stop a running worker: SIGTERM to what okstra started for it, SIGKILL after
        `grace` seconds (default 10, at most this server's wait slice); its tmux pane
        is closed. A worker that is not running is left as it is."""
        grace = min(grace, self.slice)
        return await self._answer(stopped, actions.worker_stop, who, grace=grace)

    async def report_finalize(self, data: Data) -> CallToolResult:
        """Write this run's executionRoles — every role execution with its recorded
        outcome — onto the final report's JSON data file (a file of the project, outside
        .okstra). Every other key of the report is kept."""
        return await self._answer(finalized, _finalize, data)

    async def worker_diff(self, who: Who, stat: Stat = False) -> CallToolResult:
        """A writer's changes against its base, committed and uncommitted (`stat: true`:
        the summary of files changed). Only a worker that wrote in a worktree of its
        own has one."""
        return await self._answer(diff, actions.worker_diff, who, stat=stat)

    async def worker_merge(self, who: Who, squash: Squash = False) -> CallToolResult:
        """Merge an ended writer's branch into the branch checked out in the project
        (`squash: true`: one commit). Refused, changing nothing, while the project has
        uncommitted changes to the same files; a conflict is aborted and named."""
        return await self._answer(merged, actions.worker_merge, who, squash=squash)

    async def worker_discard(self, who: Who, yes: Yes) -> CallToolResult:
        """Throw an ended writer's work away: remove its worktree and delete its branch.
        Ask the person first; `yes: true` says they agreed."""
        if not yes:
            why = "discarding throws the writer's work away: ask the person, then pass yes: true"
            return refusal(UsageError(why, field="yes"))
        return await self._answer(discarded, actions.worker_discard, who)

    def tools(self) -> list[tuple[Callable[..., Any], type[Any], bool]]:
        """Each tool, the record its structured content is, and whether it only reads."""
        return [
            (self.team_status, actions.TeamStatus, True),
            (self.worker_start, actions.Started, False),
            (self.worker_send, actions.Started, False),
            (self.worker_wait, actions.Waited, True),
            (self.worker_result, actions.WorkerResult, True),
            (self.worker_stop, actions.Stopped, False),
            (self.report_finalize, actions.Finalized, False),
            (self.worker_diff, actions.WorkerDiff, True),
            (self.worker_merge, actions.WorkerMerge, False),
            (self.worker_discard, actions.WorkerDiscard, False),
        ]


def _guarded(call: Callable[[], Any]) -> Any:
    """Run `call`; an `OkstraError` (or the machine's `OSError`) becomes `Refused`."""
    try:
        return call()
    except OkstraError as exc:
        raise Refused(exc) from None
    except OSError as exc:
        error = FileSystemError(
            f"file system error: {describe_os_error(exc)}", path=exc.filename or None
        )
        raise Refused(error) from None


def _finalize(run_dir: Path, environment: Environment, data: str) -> actions.Finalized:
    """Finalize a report that is a file of the run's project (links followed first)."""
    _, manifest = read_run_manifest(run_dir)
    root = Path(os.path.realpath(manifest.project_root))
    given = Path(data)
    real = Path(os.path.realpath(given if given.is_absolute() else root / given))
    if root not in real.parents:
        raise UsageError(
            f"expected a file inside the run's project ({root}), got {data!r}", field="data"
        )
    return actions.report_finalize(run_dir, real)


INSTRUCTIONS = (
    "okstra's team of one run. Start workers (worker_start) with their whole task as "
    "the prompt, wait for them (worker_wait: one call waits a slice and answers with "
    "the members still running; call it again), read each one's output "
    "(worker_result), send an ended one a follow-up (worker_send), see the whole team "
    "(team_status), stop one (worker_stop), "
    "review and merge a writer's worktree (worker_diff, worker_merge, worker_discard), "
    "and write the run's execution roles onto the final report (report_finalize). A "
    "refusal is a tool error that says what to change."
)


def _strict(tool: Tool) -> Tool:
    """`tool` refusing any argument it does not declare, and saying so in its schema."""
    base = tool.fn_metadata.arg_model
    strict: type[BaseModel] = type(
        base.__name__,
        (base,),
        {"model_config": ConfigDict(**{**base.model_config, "extra": "forbid"})},
    )
    schema = strict.model_json_schema(by_alias=True)
    schema.pop("title", None)
    metadata = tool.fn_metadata.model_copy(update={"arg_model": strict})
    return tool.model_copy(update={"fn_metadata": metadata, "parameters": schema})


def build_server(
    run_dir: Path, environment: Environment, *, slice_seconds: float
) -> MCPServer[Any]:
    """The server of the run at `run_dir` (already located and checked)."""
    team = Team(run_dir, environment, slice_seconds=slice_seconds)
    tools = []
    for fn, record, reads in team.tools():
        tool = _strict(
            Tool.from_function(
                fn,
                annotations=ToolAnnotations(
                    read_only_hint=reads,
                    destructive_hint=fn.__name__ in ("worker_stop", "worker_discard"),
                    open_world_hint=False,
                ),
            )
        )
        schema = json_schema(record, mode="serialization")
        metadata = tool.fn_metadata.model_copy(update={"output_schema": schema})
        tools.append(tool.model_copy(update={"fn_metadata": metadata}))
    return MCPServer(
        "okstra",
        title=f"okstra — run {run_dir.name}",
        instructions=INSTRUCTIONS,
        version=__version__,
        tools=tools,
        log_level="WARNING",
    )


def serve(run_dir: Path, environment: Environment, *, slice_seconds: float) -> None:
    """Serve the run on stdin/stdout until the client closes stdin."""
    build_server(run_dir, environment, slice_seconds=slice_seconds).run("stdio")


# A last line shown in a status row is cut to this many characters.
_LAST = 80


def member_line(w: WorkerState) -> str:
    parts = [w.short, w.status, w.model_ref or "-"]
    if w.leader:
        parts.append("(the lead: you)")
    if w.surface:
        parts.append(w.surface)
    if w.started_at:
        parts.append(elapsed(w.elapsed_seconds))
    if w.activity:
        parts.append(w.activity)
    if w.access and not w.leader:
        parts.append(w.access)
    if w.branch:
        parts.append(f"branch {w.branch}")
    if not w.leader and w.state != "prepared":
        parts.append(f"usage {usage_text(w.usage)}")
    line = "  ".join(parts)
    if w.last_line:
        line += f"  | {w.last_line[:_LAST]}"
    return inert(line)


def team(status: TeamStatus) -> str:
    lines = [f"run {inert(status.run_id)}: {len(status.workers)} members"]
    lines += [member_line(w) for w in status.workers]
    return "\n".join(lines)


def started(s: Started) -> str:
    where = f"tmux pane {s.pane_ref}" if s.surface == "tmux" else "background"
    return inert(
        f"started {s.label} ({where}). Wait for it with worker_wait "
        f'{{"who": ["{s.label.split(" ")[0]}"]}}, then read it with worker_result.'
    )


def _shorts(states: Iterable[WorkerState]) -> str:
    return ", ".join(f"{w.short} ({elapsed(w.elapsed_seconds)})" for w in states)


def waited(w: Waited) -> str:
    ended = [s for s in w.workers if s.ended]
    running = [s for s in w.workers if not s.ended]
    lines = [member_line(s) for s in ended]
    if w.timed_out:
        lines.append(
            inert(
                f"still running: {_shorts(running)} — call worker_wait again to keep waiting "
                "(or worker_stop)."
            )
        )
    elif running:
        lines.append(inert(f"still running: {_shorts(running)}"))
    if ended and not w.timed_out:
        lines.append("read each one's output with worker_result.")
    return "\n".join(lines)


def progress(w: Waited, seconds: float) -> str:
    running = [s for s in w.workers if not s.ended]
    return inert(f"waited {seconds:.0f}s; running: {_shorts(running) or 'none'}")


def result(r: WorkerResult) -> str:
    head = f"{r.label} ({r.status}), from its {r.source}"
    if r.truncated:
        head += (
            f"; the first {len(r.data):,} of {r.size:,} bytes (all of it: {r.path}, "
            "or worker_result with full)"
        )
    return inert(head) + ":\n\n" + inert(r.text, keep_newlines=True)


def stopped(s: Stopped) -> str:
    w = s.worker
    if not s.was_running:
        return inert(f"{w.short} is not running ({w.status})")
    steps = ", ".join(s.steps) or "nothing to signal"
    return inert(f"{w.short}: {steps}; now {w.status}")


def finalized(f: Finalized) -> str:
    rows = [f"{r.get('roleExecutionRef')}: {r.get('status')}" for r in f.execution_roles]
    return inert(f"wrote executionRoles onto {f.report}:\n" + "\n".join(rows), keep_newlines=True)


def diff(d: WorkerDiff) -> str:
    head = f"{d.label}: branch {d.branch} against {d.base_commit[:12]} ({d.worktree_path})"
    return inert(head) + "\n\n" + inert(d.text, keep_newlines=True)


def merged(m: WorkerMerge) -> str:
    how = "squashed" if m.squash else "merged"
    lines = [f"{how} {m.branch} into {m.into}: {m.commit[:12]} ({len(m.files)} files)"]
    if m.kept_leftovers:
        lines.append(m.kept_leftovers)
    return inert("\n".join(lines), keep_newlines=True)


def discarded(d: WorkerDiscard) -> str:
    return inert(f"discarded {d.label} (branch {d.branch}): {', '.join(d.steps)}")


def refused(exc: OkstraError) -> str:
    return "okstra: " + inert(exc.render(), keep_newlines=True)
