"""The headless command line: `okstra models|team|wizard|prepare|report|resume|schema|completion`.

Protocol commands print exactly one JSON document on stdout (camelCase keys).
Commands for people (`models`, `team`, `report roles`, `runs`, `status`, `attach`,
`stop`, `doctor`) print a table or a few lines by default and the same JSON document
with `--json`: their parsers set `human` (payload → text) and a `--json` flag;
`completion` prints a shell script.
Errors are `OkstraError`s mapped to `{"ok": false, "error": …}` (or, for a command
printing for people, `okstra: …` on stderr) and an exit code (2 for bad input/usage).
No traceback reaches the user unless `OKSTRA_DEBUG=1`.

Subcommands live in sibling modules, each exposing `register(subparsers)`; a
handler takes the parsed namespace and returns `(payload, exit_code)`. Heavy imports
happen inside handlers so `okstra wizard step` stays lean.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import orjson

from ..display import inert
from ..errors import FileSystemError, OkstraError, UsageError, describe_os_error
from ..records import to_data

if TYPE_CHECKING:
    import argparse

# A command's handler: its result — a JSON object, or a record (`records.to_data` writes
# it) — and its exit code. Its `human` renderer, if any, takes the same result.
Handler = Callable[["argparse.Namespace"], tuple[Any, int]]

COMMANDS = (
    "models",
    "team",
    "wizard",
    "prepare",
    "report",
    "resume",
    "schema",
    "runs",
    "status",
    "attach",
    "stop",
    "doctor",
    "trust",
    "worker",
    "mcp",
    "completion",
    "demo",
)
# Commands that print for people unless given --json (errors then go to stderr as text);
# of `report`, only `report roles`.
TABLE_COMMANDS = (
    "resume",
    "models",
    "team",
    "report",
    "runs",
    "status",
    "attach",
    "stop",
    "doctor",
    "trust",
    "worker",
    "demo",
    "mcp",
)


def emit(payload: dict[str, Any]) -> None:
    sys.stdout.buffer.write(orjson.dumps(payload, option=orjson.OPT_INDENT_2) + b"\n")
    sys.stdout.buffer.flush()


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The CLI's parser: every command, or only `command`'s (the one being run)."""
    from ._parser import build_parser as build  # argparse: only when a parser is needed

    return build(command)


# The exit status of a command whose reader went away (128 + SIGPIPE, what a shell
# reports for `git log | head -1`).
EXIT_BROKEN_PIPE = 141


def main(argv: Sequence[str] | None = None) -> int:
    """Run one headless command; return the process exit code.

    When the reader of stdout goes away (`okstra wizard show | head -c 10`), the
    command stops quietly, as git does: no traceback, no message, exit 141.
    """
    try:
        code = _run(list(sys.argv[1:] if argv is None else argv))
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        # Nothing more can reach the reader; keep the interpreter's own flush at exit
        # from reporting the same broken pipe.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_BROKEN_PIPE


def _dispatch(command: str | None, args_list: list[str]) -> int:
    """Parse the arguments, run the command's handler, print its result; its exit code."""
    # The wizard's per-step commands in their plain spellings skip argparse (its
    # import and the parser's construction are a tenth of a step); anything else,
    # help included, goes through the parser.
    ns: Any = None
    if command == "wizard":
        from ._wizard import parse_plain

        ns = parse_plain(args_list)
    if ns is None:
        parser = build_parser(command)
        if any(a in ("-h", "--help") for a in args_list) or any(
            a == "--version" for a in args_list[:1]
        ):
            try:
                parser.parse_args(args_list)
            except SystemExit as exc:
                return int(exc.code or 0)
        ns = parser.parse_args(args_list)
    handler: Handler | None = getattr(ns, "handler", None)
    if handler is None:
        raise UsageError("a command is required: " + ", ".join(COMMANDS))
    result, code = handler(ns)
    human: Callable[[Any], None] | None = getattr(ns, "human", None)
    if human is not None and not getattr(ns, "json", False):
        human(result)
    else:
        emit(result if isinstance(result, dict) else to_data(result))
    return code


def _run(args_list: list[str]) -> int:
    debug = os.environ.get("OKSTRA_DEBUG") == "1"
    words = [a for a in args_list if not a.startswith("-")]
    command = words[0] if words else None
    as_text = (
        command in TABLE_COMMANDS
        and (command != "report" or words[1:2] == ["roles"])
        and "--json" not in args_list
    )

    def fail(payload: dict[str, Any]) -> None:
        if as_text:
            # An error names what the user typed and what a file holds: inert text.
            print(f"okstra: {inert(payload.get('error'), keep_newlines=True)}", file=sys.stderr)
        else:
            emit(payload)

    try:
        return _dispatch(command, args_list)
    except OkstraError as exc:
        if debug:
            _print_traceback()
        fail(exc.to_json())
        return exc.exit_code
    except KeyboardInterrupt:
        fail({"ok": False, "error": "interrupted"})
        return 130
    except OSError as exc:
        if isinstance(exc, BrokenPipeError):
            raise  # stdout's reader is gone: `main` stops quietly
        # Disk full, read-only file system, permission denied, name too long, not a
        # directory…: the machine's state, not a bug — exit 2 naming the file and errno.
        if debug:
            _print_traceback()
        error = FileSystemError(
            f"file system error: {describe_os_error(exc)}", path=exc.filename or None
        )
        emit(error.to_json())
        return error.exit_code
    except Exception as exc:  # the last line of defence: never a bare traceback
        if debug:
            _print_traceback()
        fail(
            {
                "ok": False,
                "error": f"internal error: {type(exc).__name__}: {exc} "
                "(set OKSTRA_DEBUG=1 for a traceback)",
            }
        )
        return 70


def _print_traceback() -> None:
    """The current exception's traceback on stderr (`OKSTRA_DEBUG=1` only)."""
    import traceback  # only a debugging run pays for the module

    traceback.print_exc(file=sys.stderr)
