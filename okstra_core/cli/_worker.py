"""`okstra worker start|send|status|wait|result|stop|diff|merge|discard`: a run's workers.

Text for people by default, one JSON document with `--json`; `<who>` is a role execution
ref, its label, or `<role>#<n>`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..display import elapsed, inert
from ..environment import Environment
from ..errors import UsageError
from ..life.limits import (
    DEFAULT_GRACE_SECONDS,
    MAX_GRACE_SECONDS,
    MAX_PROMPT_BYTES,
    MAX_WAIT_SECONDS,
    RESULT_SHOWN_BYTES,
)
from ..records import fields_of, to_data
from . import RUN_ARG, Arg, add_arguments, add_command, confirmed, json_flag, run_dir, say, seconds

if TYPE_CHECKING:
    import argparse

    from ..life.actions import TeamStatus, WorkersStopped
    from ..life.workers.control import Stopped, Waited
    from ..life.workers.observe import WorkerState
    from ..life.workers.start import Started

WHO_HELP = "a role execution ref, its label, or <role>#<n> (e.g. analyser#1)"
WRITER_HELP = "a writer: a role execution ref, its label, or <role>#<n> (e.g. implementer#1)"
RESULT_SHOWN_MIB = RESULT_SHOWN_BYTES // (1024 * 1024)
# `--until` / `--wait`: the activity a member is waited into, as typed.
UNTIL = {"waiting": "waiting for input", "idle": "idle", "stalled": "stalled"}


def _turn(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise UsageError(f"expected a turn number (1, 2, …), got {value!r}", field="--turn")
    return int(value)


def _sub(sub: Any, name: str, help_: str, *examples: str, args: Sequence[Arg] = ()) -> Any:
    """A worker command's parser: its examples, its `run`, then `args`."""
    return add_command(sub, name, help_, *examples, args=(RUN_ARG, *args))


def register(sub: Any) -> None:
    """Add `worker` and its commands to the top-level parser."""
    worker = add_command(
        sub, "worker", "start, watch, wait for and stop a run's workers",
        "okstra worker start planning-001 analyser#1 --prompt-file task.md",
        "okstra worker status planning-001",
        "okstra worker wait planning-001 analyser#1 && "
        "okstra worker result planning-001 analyser#1",
        description="The run's workers: each a one-shot run of its provider's CLI, "
        "started by okstra, recorded in the run manifest and the timeline.",
    )  # fmt: skip
    wsub = worker.add_subparsers(
        dest="worker_command", metavar="COMMAND", parser_class=type(worker)
    )
    start = _sub(
        wsub, "start", "start a worker with a prompt; returns at once",
        "okstra worker start planning-001 analyser#1 --prompt-file task-analyser-1.md",
        "okstra worker start planning-001 analyser#1 --again --prompt 'Check again.'",
        "okstra worker start planning-001 --role fixer --model codex/gpt-5.6-sol "
        "--prompt-file fix.md",
        args=(("who", dict(nargs="?", help=WHO_HELP)),),
    )  # fmt: skip
    _prompted(start, "the prompt")
    add_arguments(start, (
        ("--again", dict(action="store_true", help="start a new attempt of <who>")),
        ("--role", dict(help="start a dynamic role of the run (with --model)")),
        ("--model", dict(help="the model ref of a dynamic role")),
        ("--source", dict(metavar="WHO", help="the role execution a dynamic role comes from "
                          "(default: the lead's)")),
        ("--shared-tree", dict(action="store_true", help="a writer runs in the project's own "
                               "tree, not a git worktree of its own")),
    ))  # fmt: skip
    json_flag(start, _start, _start_human)
    send = _sub(
        wsub, "send",
        "send an ended worker a follow-up in its own conversation; returns at once",
        "okstra worker send implementation-001 implementer#1 --prompt-file findings.md",
        "okstra worker send planning-001 analyser#1 --prompt 'Say more about item 3.'",
        args=(("who", dict(help=WHO_HELP)),),
    )  # fmt: skip
    _prompted(send, "the follow-up")
    json_flag(send, _send, _start_human)
    _register_watch(wsub)
    # Review a writer's branch, merge it, throw it away.
    review = (
        ("diff", "a writer's changes against its base (committed and uncommitted)",
         ("okstra worker diff implementation-001 implementer#1 --stat",),
         "--stat", "a summary of the files changed", _diff, _diff_human),
        ("merge", "merge an ended writer's branch into the branch checked out in the project",
         ("okstra worker merge implementation-001 implementer#1",
          "okstra worker merge implementation-001 fixer#1 --squash"),
         "--squash", "one commit on the project's branch", _merge, _merge_human),
        ("discard", "remove an ended writer's worktree and delete its branch (asks first)",
         ("okstra worker discard implementation-001 implementer#1 --yes",),
         "--yes", "do not ask (needed without a terminal)", _discard, _discard_human),
    )  # fmt: skip
    for name, summary, examples, flag, flag_help, handler, human in review:
        who = ("who", dict(help=WRITER_HELP))
        flagged = (flag, dict(action="store_true", help=flag_help))
        json_flag(_sub(wsub, name, summary, *examples, args=(who, flagged)), handler, human)


def _prompted(parser: Any, what: str) -> None:
    """`--prompt` or `--prompt-file` (one required), and `--surface`."""
    add_arguments(parser.add_mutually_exclusive_group(required=True), (
        ("--prompt", dict(help=f"{what} (the worker reads it on standard input)")),
        ("--prompt-file", dict(metavar="FILE", help=f"a file holding {what}")),
    ))  # fmt: skip
    add_arguments(parser, (
        ("--surface", dict(choices=("tmux", "background"),
                           help="default: tmux when tmux is running for you, else background")),
    ))  # fmt: skip


def _register_watch(wsub: Any) -> None:
    status = _sub(
        wsub, "status", "every role execution of the run and its state",
        "okstra worker status planning-001",
        "okstra worker status planning-001 --json",
    )  # fmt: skip
    json_flag(status, _status, lambda status: say(status_text(status.workers)))
    wait = _sub(
        wsub, "wait", "wait until workers end; exit with their status (124: timeout)",
        "okstra worker wait planning-001 analyser#1 analyser#2 --timeout 1800",
        "okstra worker wait planning-001 analyser#1 critic#1 --any",
        args=(
            ("who", dict(nargs="+", help=WHO_HELP)),
            ("--timeout", dict(type=seconds("--timeout", 0, MAX_WAIT_SECONDS), metavar="SECONDS",
                               help="give up after this long (exit 124); default: wait as "
                               "long as it takes")),
            ("--any", dict(action="store_true", help="return when the first of them ends")),
            ("--until", dict(choices=tuple(UNTIL), help="return also when they reach this "
                             "activity (waiting: waiting for input or idle)")),
        ),
    )  # fmt: skip
    json_flag(wait, _wait, _wait_human)
    result = _sub(
        wsub, "result", "print what a worker produced",
        "okstra worker result planning-001 analyser#1 > analysis-1.md",
        args=(
            ("who", dict(help=WHO_HELP)),
            ("--full", dict(action="store_true", help=f"all of it (by default at most "
                            f"{RESULT_SHOWN_MIB} MiB, and where the rest is)")),
            ("--turn", dict(type=_turn, metavar="N",
                            help="an earlier turn's product (default: the latest turn's)")),
        ),
    )  # fmt: skip
    json_flag(result, _result, _result_human)
    stop = _sub(
        wsub, "stop", "stop a worker (SIGTERM, then SIGKILL after --grace)",
        "okstra worker stop planning-001 analyser#1 --grace 5",
        "okstra worker stop planning-001 --all",
        args=(
            ("who", dict(nargs="?", help=WHO_HELP)),
            ("--all", dict(action="store_true", help="stop every running worker")),
            ("--grace", dict(type=seconds("--grace", 0, MAX_GRACE_SECONDS),
                             default=DEFAULT_GRACE_SECONDS, metavar="SECONDS",
                             help="how long the worker gets to stop before it is killed "
                             "(default 10)")),
        ),
    )  # fmt: skip
    json_flag(stop, _stop, _stop_human)


def _prompt(ns: argparse.Namespace) -> str:
    if ns.prompt is not None:
        text: str = ns.prompt
    else:
        from ..store import read_bytes

        data = read_bytes(Path(ns.prompt_file), what="prompt file", limit=MAX_PROMPT_BYTES)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise UsageError("the prompt file is not UTF-8 text", field="--prompt-file") from None
    if not text.strip():
        raise UsageError(
            "the prompt is empty", field="--prompt-file" if ns.prompt is None else "--prompt"
        )
    return text


def _start(ns: argparse.Namespace) -> tuple[Started, int]:
    from ..life.actions import worker_start

    options = fields_of(ns, "who again role model source surface shared_tree")
    return worker_start(run_dir(ns.run), Environment.real(), prompt=_prompt(ns), **options), 0


def _start_human(started: Started) -> None:
    where = (
        f"tmux pane {started.pane_ref} ({started.window_ref})"
        if started.surface == "tmux"
        else f"background, output in {started.output_log}"
    )
    turn = f" (turn {started.turn})" if started.turn > 1 else ""
    lines = [f"okstra: started {started.label}{turn} — {where}"]
    if started.worktree_path:
        lines.append(f"okstra: it works in {started.worktree_path} on branch {started.branch}")
    if started.tree_note:
        lines.append(f"okstra: it {started.tree_note}")
    lines += [
        f"okstra: wait for it:  {started.wait_command}",
        f"okstra: its result:   {started.result_command}",
        *(f"okstra: note: {note}" for note in started.notes),
    ]
    say("".join(inert(line) + "\n" for line in lines))


def _send(ns: argparse.Namespace) -> tuple[Started, int]:
    from ..life.actions import worker_send

    sent = worker_send(
        run_dir(ns.run), Environment.real(), ns.who, prompt=_prompt(ns), surface=ns.surface
    )
    return sent, 0


def _status(ns: argparse.Namespace) -> tuple[TeamStatus, int]:
    from ..life.actions import team_status

    return team_status(run_dir(ns.run), Environment.real()), 0


def status_text(workers: Sequence[WorkerState]) -> str:
    """The team as a table (every cell made inert; the last line folds)."""
    from ..life.workers.observe import shown_state
    from ..life.workers.usage import usage_text
    from ._human import text_table

    headers = ["WHO", "MODEL", "SURFACE", "STATE", "STARTED", "ELAPSED", "USAGE", "LAST LINE"]
    rows = [
        [
            w.short,
            w.model_ref or "-",
            w.surface or "-",
            shown_state(w),
            (w.started_at or "-")[11:19] or "-",
            elapsed(w.elapsed_seconds),
            usage_text(w.usage),
            (w.activity_detail or w.last_line or "")[:60],
        ]
        for w in workers
    ]
    return text_table(headers, rows, fold=("LAST LINE",))


def _wait(ns: argparse.Namespace) -> tuple[Waited, int]:
    from ..life.actions import worker_wait

    until = UNTIL[ns.until] if ns.until else None
    waited = worker_wait(
        run_dir(ns.run), Environment.real(), ns.who, timeout=ns.timeout, any_one=ns.any, until=until
    )
    return waited, waited.exit_code


def _wait_human(waited: Waited) -> None:
    if waited.timed_out:
        running = ", ".join(w.short for w in waited.workers if w.state == "running")
        print(f"okstra: timed out; still running: {running}", file=sys.stderr)
    say(status_text(waited.workers))


def _result(ns: argparse.Namespace) -> tuple[dict[str, Any], int]:
    from ..life.actions import worker_result

    found = worker_result(run_dir(ns.run), Environment.real(), ns.who, full=ns.full, turn=ns.turn)
    payload: dict[str, Any] = to_data(found)
    if not ns.json:
        payload["_bytes"] = found.data  # printed as is, not as JSON
    return payload, 0 if found.ok else 1


def _result_human(payload: dict[str, Any]) -> None:
    data: bytes = payload["_bytes"]
    if payload.get("why"):
        print(f"okstra: {inert(payload['why'])}", file=sys.stderr)
    if sys.stdout.isatty():
        say(inert(data.decode("utf-8", errors="replace"), keep_newlines=True))
    else:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    if payload["truncated"]:
        print(
            f"okstra: showed {len(data):,} of {payload['size']:,} bytes; all of it: "
            f"{inert(payload['path'])} (or --full)",
            file=sys.stderr,
        )


def _stop(ns: argparse.Namespace) -> tuple[WorkersStopped | Stopped, int]:
    from ..life.actions import worker_stop, workers_stop_all

    if ns.all == (ns.who is not None):
        raise UsageError("name one worker, or --all", field="<who>")
    if ns.all:
        reply: WorkersStopped | Stopped = workers_stop_all(
            run_dir(ns.run), Environment.real(), grace=ns.grace
        )
    else:
        reply = worker_stop(run_dir(ns.run), Environment.real(), ns.who, grace=ns.grace)
    return reply, 0 if reply.ok else 1


def _stop_human(reply: WorkersStopped | Stopped) -> None:
    from ..life.actions import WorkersStopped

    for stopped in reply.workers if isinstance(reply, WorkersStopped) else (reply,):
        worker = stopped.worker
        if not stopped.was_running:
            text = f"okstra: {worker.short} is not running ({worker.status})"
        else:
            steps = ", ".join(stopped.steps) or "nothing to signal"
            text = f"okstra: {worker.short}: {steps}; now {worker.status}"
        say(inert(text) + "\n")
    if isinstance(reply, WorkersStopped) and not reply.workers:
        say("okstra: no worker is running\n")


def _diff(ns: argparse.Namespace) -> tuple[dict[str, Any], int]:
    from ..life.actions import worker_diff

    return to_data(worker_diff(run_dir(ns.run), Environment.real(), ns.who, stat=ns.stat)), 0


def _diff_human(payload: dict[str, Any]) -> None:
    text: str = payload["text"]
    if sys.stdout.isatty():
        text = inert(text, keep_newlines=True)
    say(text or f"okstra: {inert(payload['label'])} changed nothing\n")


def _merge(ns: argparse.Namespace) -> tuple[dict[str, Any], int]:
    from ..life.actions import worker_merge

    done = worker_merge(run_dir(ns.run), Environment.real(), ns.who, squash=ns.squash)
    return to_data(done), 0


def _merge_human(payload: dict[str, Any]) -> None:
    how = "squashed into" if payload["squash"] else "merged into"
    files = len(payload["files"])
    text = (
        f"okstra: {payload['label']} ({payload['branch']}) {how} {payload['into']} — "
        f"{files} file{'s' if files != 1 else ''}, now at {payload['commit'][:12]}"
    )
    say(inert(text) + "\n")


def _discard(ns: argparse.Namespace) -> tuple[dict[str, Any], int]:
    from ..life.actions import worker_discard

    run = run_dir(ns.run)
    if not ns.yes and not confirmed(
        f"okstra: remove {ns.who}'s worktree and delete its branch?",
        "discarding throws the writer's work away: pass --yes (no terminal to ask)",
        terminal=sys.stdin.isatty(),
    ):
        return {"ok": False, "discarded": False, "error": "not confirmed"}, 1
    return to_data(worker_discard(run, Environment.real(), ns.who)), 0


def _discard_human(payload: dict[str, Any]) -> None:
    if not payload.get("ok"):
        say("okstra: nothing was discarded\n")
        return
    steps = "; ".join(payload["steps"]) or "nothing was left to remove"
    say(inert(f"okstra: {payload['label']}: {steps}") + "\n")
