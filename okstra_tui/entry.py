"""Console-script entry point.

A subcommand (`models`, `team`, `wizard`, `prepare`, `report`) goes to the headless
CLI in okstra_core without importing textual; no subcommand opens the app (textual
is imported lazily, only then — it is most of the start-up time of the app and none of
the headless path's). `okstra --help` is the app's help: its options, then the
headless CLI's own help (its commands), so one page lists everything.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path


def _app_parser(*, with_commands: bool = False) -> argparse.ArgumentParser:
    """The app's options; `with_commands` appends the headless CLI's help (for -h)."""
    parser = argparse.ArgumentParser(
        prog="okstra",
        usage="okstra [app options]\n       okstra COMMAND ...  (headless, see below)",
        description="Set up and start a team of AI coding agents on one task.\n"
        "Without a command, okstra opens the terminal app with these options.",
        # The commands' help is argparse's own text: keep its line breaks.
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=_commands_help() if with_commands else None,
    )
    parser.add_argument(
        "--project-root",
        type=Path,
        default=None,
        metavar="DIR",
        help="the project to set up (default: the current directory)",
    )
    parser.add_argument(
        "--state",
        type=Path,
        default=None,
        metavar="FILE",
        help="open (or create) this wizard state file directly (a bare name: in the wizards dir)",
    )
    parser.add_argument(
        "--host", default=None, metavar="ID", help="host runtime id (default: detected)"
    )
    parser.add_argument(
        "--entry-mode",
        choices=("spawn-process", "current-session"),
        default=None,
        help="how the lead session starts",
    )
    parser.add_argument("--task-type", default=None, metavar="TYPE", help="preselect the task type")
    parser.add_argument(
        "--launch",
        choices=("auto", "tmux", "exec", "none"),
        default="auto",
        help="how prepare starts the lead session (default: auto)",
    )
    return parser


def _commands_help() -> str:
    """The headless CLI's help, under a heading (built only when help is asked for)."""
    from okstra_core.cli import build_parser

    return (
        "headless commands (one JSON document on stdout; runs, status, stop and doctor "
        "print for people unless --json):\n\n" + build_parser().format_help()
    )


def run_app(argv: Sequence[str]) -> int:
    """Run the terminal app; exec the lead CLI afterwards if it asked for that."""
    args = list(argv)
    ns = _app_parser(with_commands=any(a in ("-h", "--help") for a in args)).parse_args(args)
    from okstra_core.errors import OkstraError

    from .app import make_app  # deferred: importing textual is the slow part

    try:
        app = make_app(
            project_root=ns.project_root,
            state=ns.state,
            host=ns.host,
            entry_mode=ns.entry_mode,
            task_type=ns.task_type,
            launch=ns.launch,
        )
    except OkstraError as exc:
        # E.g. a broken text catalog: named, not a traceback, before the screen is taken.
        print(f"okstra: {exc.render()}", file=sys.stderr)
        return 1
    request = app.run()
    if app.return_code:
        return app.return_code
    if request is None:
        return 0
    # The app has exited and Textual restored the terminal: hand it to the lead CLI,
    # which runs as okstra's foreground child; okstra records its exit.
    env = dict(os.environ if request.env is None else request.env)
    if request.run_dir is not None:
        from okstra_core.environment import Environment
        from okstra_core.lead import run_foreground

        try:
            return run_foreground(
                request.run_dir,
                list(request.argv),
                env,
                request.cwd,
                Environment.real(),
                say=lambda line: print(line, file=sys.stderr, flush=True),
            )
        except OkstraError as exc:
            print(f"okstra: {exc.render()}", file=sys.stderr)
            return 1
    os.chdir(request.cwd)
    try:
        os.execvpe(request.argv[0], list(request.argv), env)
    except OSError as exc:
        print(f"okstra: could not start {request.argv[0]}: {exc.strerror}", file=sys.stderr)
        return 1
    return 0  # not reached: execvpe replaced the process


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    from okstra_core.cli import COMMANDS

    first = next((a for a in args if not a.startswith("-")), None)
    # `okstra --help` falls through to the app parser, whose help lists the commands.
    if first in COMMANDS or (args and args[0] == "--version"):
        from okstra_core.cli import main as cli_main

        return cli_main(args)
    return run_app(args)
