"""The headless command line: `okstra models|team|wizard|prepare|report|resume|schema|…`.

Protocol commands print exactly one JSON document on stdout (camelCase keys); commands
for people print text unless given `--json` (their parsers set `human`, payload → text).
An `OkstraError` becomes `{"ok": false, "error": …}` (or `okstra: …` on stderr for a
command printing for people) and its exit code; a traceback only with `OKSTRA_DEBUG=1`.
Each sibling module has `register(subparsers)`; a handler takes the namespace and returns
`(payload, exit_code)`. Heavy imports happen inside handlers so `wizard step` stays lean.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

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
    "models", "team", "wizard", "prepare", "report", "resume", "schema", "runs", "status",
    "attach", "stop", "doctor", "trust", "worker", "mcp", "completion", "demo",
)  # fmt: skip
# What a group of commands given none of its commands says.
_GROUPS = {
    "wizard": "okstra wizard: a subcommand is required: init, step, show, outcome, answers, "
    "list, schema",
    "worker": "okstra worker: a command is required: start, send, status, wait, result, stop, "
    "diff, merge, discard",
    "report": "okstra report: a command is required: roles, check, finalize",
}
# Commands that print for people unless given --json (errors then go to stderr as text);
# of `report`, only `report roles`.
TABLE_COMMANDS = (
    "resume", "models", "team", "report", "runs", "status", "attach", "stop", "doctor",
    "trust", "worker", "demo", "mcp",
)  # fmt: skip


def emit(payload: dict[str, Any]) -> None:
    sys.stdout.buffer.write(orjson.dumps(payload, option=orjson.OPT_INDENT_2) + b"\n")
    sys.stdout.buffer.flush()


def say(text: str) -> None:
    """Write `text` to stdout and flush it."""
    sys.stdout.write(text)
    sys.stdout.flush()


def confirmed(question: str, headless: str, *, terminal: bool) -> bool:
    """Whether the person at the `terminal` answered `question` yes; without one,
    `headless` is the usage error (`--yes` answers it)."""
    if not terminal:
        raise UsageError(headless, field="--yes")
    print(question + " [y/N] ", end="", file=sys.stderr, flush=True)
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def run_dir(value: str) -> Path:
    """The run directory a `<run>` argument names (from the current directory)."""
    from ..life.locate import locate_run

    return locate_run(value, Path.cwd(), os.environ)


def run_lead(
    run_dir: Path,
    argv: list[str],
    env: dict[str, str],
    cwd: Path,
    environment: Any,
    *,
    resumed: bool = False,
) -> NoReturn:
    """Run the lead CLI as okstra's foreground child (exec backend) and exit with its
    status. A resumed lead's lines are made inert, and its early exit is not remarked on."""
    from ..life.foreground import run_foreground

    def tell(line: str) -> None:
        print(inert(line) if resumed else line, file=sys.stderr, flush=True)

    try:
        code, said = run_foreground(run_dir, argv, env, cwd, environment, say=tell, resumed=resumed)
    except OkstraError as exc:
        # What was printed is out; say what failed on stderr and exit like a launch error.
        tell(f"okstra: {exc.render()}")
        raise SystemExit(1) from None
    if said is not None and not resumed:
        tell(said)
    raise SystemExit(code)


def seconds(field: str, low: float, high: float, *, closed: bool = True) -> Any:
    """An argparse type: a number of seconds in `[low, high]` (`[low, high)` unless closed)."""

    def parse(value: str) -> float:
        try:
            number = float(value)
        except ValueError:
            raise UsageError(f"expected a number of seconds, got {value!r}", field=field) from None
        if not (low <= number <= high if closed else low <= number < high):
            end = "]" if closed else ")"
            raise UsageError(
                f"expected seconds in [{low:g}, {high:g}{end}, got {value!r}", field=field
            )
        return number

    return parse


# An argument of a command: its flags (space-separated) or name, and `add_argument`'s keywords.
Arg = tuple[str, dict[str, Any]]
# The `<run>` of the commands about one run.
RUN_HELP = "a run id (e.g. planning-001), <task>/<run-id>, or the run's directory"
RUN_ARG: Arg = ("run", {"help": RUN_HELP})


def add_command(
    sub: Any, name: str, help: str, *examples: str, args: Sequence[Arg] = (), **kwargs: Any
) -> Any:
    """A subcommand's parser, its `examples` (one a line) as its epilog, with `args`."""
    import argparse

    kwargs.setdefault("epilog", "examples:\n" + "\n".join(f"  {e}" for e in examples))
    formatter = argparse.RawDescriptionHelpFormatter
    parser = sub.add_parser(name, help=help, formatter_class=formatter, **kwargs)
    add_arguments(parser, args)
    return parser


def add_arguments(parser: Any, args: Sequence[Arg]) -> None:
    """Add each of `args` to `parser` (or to a group of its arguments)."""
    for names, options in args:
        parser.add_argument(*names.split(), **options)


# `--json` of a command that prints a table by default.
TABLE_JSON = "print the JSON document (camelCase keys) instead of the table"


def json_flag(parser: Any, handler: Handler, human: Callable[[Any], None], help: str = "") -> None:
    """`--json` on a command printing for people; its handler and its text renderer."""
    parser.add_argument("--json", action="store_true", help=help or "print one JSON document")
    parser.set_defaults(handler=handler, human=human)


# The module that registers each command, in the order of the help. A run builds its own
# command's parser only: registering the others imports what their flags need, which
# `okstra wizard step` would pay for on every step. An unknown command (or none): all.
_REGISTRARS = {
    "models": "_models", "team": "_models", "wizard": "_wizard", "prepare": "_prepare",
    "report": "_prepare", "resume": "_resume", "runs": "_runs", "status": "_runs",
    "attach": "_runs", "stop": "_runs", "doctor": "_trust", "trust": "_trust",
    "worker": "_worker", "mcp": "_mcp", "completion": "_completion", "schema": "_schema",
    "demo": "_demo",
}  # fmt: skip

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
    import argparse  # only when a parser is needed
    import importlib

    from .. import __version__

    class Parser(argparse.ArgumentParser):
        """argparse that raises instead of printing usage and exiting."""

        def error(self, message: str) -> NoReturn:
            # `okstra: ` is the front end's prefix: a subcommand says its own name after it
            # (`okstra: runs: …`), the top level nothing more (not `okstra: okstra: …`).
            prog = self.prog.removeprefix("okstra").strip()
            raise UsageError(f"{prog}: {message}" if prog else message)

    parser = Parser(
        prog="okstra",
        description=(
            "Set up and start a team of AI coding agents on one task. "
            "Without a command, opens the terminal app."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"okstra {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=Parser, metavar="COMMAND")
    only = _REGISTRARS.get(command or "")
    for name in (only,) if only is not None else dict.fromkeys(_REGISTRARS.values()):
        importlib.import_module(f"{__package__}.{name}").register(sub)
    return parser


# The exit status of a command whose reader went away (128 + SIGPIPE, what a shell
# reports for `git log | head -1`).
EXIT_BROKEN_PIPE = 141


def main(argv: Sequence[str] | None = None) -> int:
    """Run one headless command; its exit code (141, quietly, once stdout's reader left)."""
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
        try:
            ns = build_parser(command).parse_args(args_list)
        except SystemExit as exc:  # help and --version (errors raise `UsageError`)
            return int(exc.code or 0)
    handler: Handler | None = getattr(ns, "handler", None)
    if handler is None:  # no command, or a group without one of its commands
        missing = "a command is required: " + ", ".join(COMMANDS)
        raise UsageError(_GROUPS.get(getattr(ns, "command", None) or "", missing))
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
    except KeyboardInterrupt:
        fail({"ok": False, "error": "interrupted"})
        return 130
    except BrokenPipeError:
        raise  # stdout's reader is gone: `main` stops quietly
    except Exception as exc:  # the last line of defence: never a bare traceback
        if debug:
            import traceback  # only a debugging run pays for the module

            traceback.print_exc(file=sys.stderr)
        if isinstance(exc, OkstraError):
            fail(exc.to_json())
            return exc.exit_code
        if isinstance(exc, OSError):
            # Disk full, read-only file system, permission denied, name too long, not a
            # directory…: the machine's state, not a bug — exit 2 naming the file and errno.
            error = FileSystemError(
                f"file system error: {describe_os_error(exc)}", path=exc.filename or None
            )
            emit(error.to_json())
            return error.exit_code
        fail(
            {
                "ok": False,
                "error": f"internal error: {type(exc).__name__}: {exc} "
                "(set OKSTRA_DEBUG=1 for a traceback)",
            }
        )
        return 70
