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

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import orjson

from .. import __version__
from ..errors import FileSystemError, OkstraError, UsageError, describe_os_error

Handler = Callable[[argparse.Namespace], tuple[dict[str, Any], int]]

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
    "completion",
)
# Commands that print for people unless given --json (errors then go to stderr as text);
# of `report`, only `report roles`.
TABLE_COMMANDS = ("models", "team", "report", "runs", "status", "attach", "stop", "doctor")


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing usage and exiting."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def emit(payload: dict[str, Any]) -> None:
    sys.stdout.buffer.write(orjson.dumps(payload, option=orjson.OPT_INDENT_2) + b"\n")
    sys.stdout.buffer.flush()


# The module that registers each command. A run builds the parser of its own command
# only: registering the others imports what their flags need (prepare's inputs, resume's
# defaults), which `okstra wizard step` would pay for on every step. A command missing
# here (or none) registers them all.
_REGISTRARS = {
    "models": "_models",
    "team": "_models",
    "wizard": "_wizard",
    "prepare": "_prepare",
    "report": "_prepare",
    "resume": "_resume",
    "schema": "_schema",
    "runs": "_runs",
    "status": "_runs",
    "attach": "_runs",
    "stop": "_runs",
    "doctor": "_doctor",
    "completion": "_completion",
}
# Every command's module, in the order their commands are listed in the help.
_MODULES = (
    "_models",
    "_wizard",
    "_prepare",
    "_resume",
    "_runs",
    "_doctor",
    "_completion",
    "_schema",
)


EXAMPLES = """\
examples:
  okstra models                       the model pool as a table (--json: as JSON)
  okstra team --task-type implementation-planning    the team okstra would pick, or why none exists
  okstra wizard init --project-root . --task-type implementation-planning
  okstra wizard step --state 20260115-093000 --answer new
  okstra prepare --state 20260115-093000 --dry-run
  okstra report roles .okstra/tasks/grp/one/runs/implementation-planning-001
  okstra resume implementation-planning-001 --exec
  okstra completion bash > ~/.local/share/bash-completion/completions/okstra

Each command has its own help: okstra COMMAND --help.
"""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The CLI's parser: every command, or only `command`'s (the one being run)."""
    parser = _Parser(
        prog="okstra",
        description=(
            "Set up and start a team of AI coding agents on one task. "
            "Without a command, opens the terminal app."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"okstra {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND")
    only = _REGISTRARS.get(command or "")
    # Import only the running command's module: the others import what their flags
    # need (prepare's inputs import the catalog loaders and the request; `schema` every
    # document model), tens of milliseconds a `wizard step` never uses.
    for name in (only,) if only is not None else _MODULES:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    return parser


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
            print(f"okstra: {payload.get('error')}", file=sys.stderr)
        else:
            emit(payload)

    try:
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
        payload, code = handler(ns)
        human: Callable[[dict[str, Any]], None] | None = getattr(ns, "human", None)
        if human is not None and not getattr(ns, "json", False):
            human(payload)
        else:
            emit(payload)
        return code
    except OkstraError as exc:
        if debug:
            traceback.print_exc(file=sys.stderr)
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
            traceback.print_exc(file=sys.stderr)
        error = FileSystemError(
            f"file system error: {describe_os_error(exc)}", path=exc.filename or None
        )
        emit(error.to_json())
        return error.exit_code
    except Exception as exc:  # the last line of defence: never a bare traceback
        if debug:
            traceback.print_exc(file=sys.stderr)
        fail(
            {
                "ok": False,
                "error": f"internal error: {type(exc).__name__}: {exc} "
                "(set OKSTRA_DEBUG=1 for a traceback)",
            }
        )
        return 70
