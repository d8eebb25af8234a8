"""Console-script entry point.

A subcommand goes to the headless CLI in okstra_core without importing textual (most of
the app's start-up time); no subcommand opens the app. `okstra --help` lists the app's
options, then the headless commands. Without a terminal the app says which headless
commands to use instead and exits 2.
"""

from __future__ import annotations

import atexit
import gc
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, NoReturn

# Importing allocates many objects and frees almost none: no cyclic GC meanwhile (`_run`).
_collecting = gc.isenabled()
gc.disable()
from okstra_core.cli._app import app_parser  # noqa: E402
from okstra_core.display import inert  # noqa: E402
from okstra_tui import interrupt  # noqa: E402

if _collecting:
    gc.enable()

if TYPE_CHECKING:
    from textual.app import App

NO_TERMINAL = (
    "okstra: the terminal app needs a terminal (stdin and stdout must be a TTY).\n"
    "  In scripts and pipes use the headless commands, which print JSON:\n"
    "    okstra wizard init --project-root DIR …   the guided setup, one step at a time\n"
    "    okstra prepare --state FILE …             prepare (and launch) a confirmed setup\n"
    "  See `okstra --help` for all of them."
)


def _commands_help() -> str:
    """The headless CLI's help, under a heading (built only when help is asked for)."""
    from okstra_core.cli import build_parser

    return (
        "headless commands (one JSON document on stdout; models, team, report roles, runs,"
        " status, stop and doctor print for people unless --json):\n\n"
        + build_parser().format_help()
    )


def _default_root() -> Path | None:
    """The project without `--project-root`: nearest `.okstra`, else git top, else here."""
    from okstra_core.discovery import default_project_root
    from okstra_core.errors import OkstraError

    try:
        return default_project_root(Path.cwd())
    except OkstraError as exc:
        print(f"okstra: {inert(exc.render())}", file=sys.stderr)
    except OSError as exc:  # the current directory is gone
        print(f"okstra: the current directory: {inert(exc.strerror or exc)}", file=sys.stderr)
    return None


def _has_terminal() -> bool:
    try:
        return sys.stdin.isatty() and sys.stdout.isatty()
    except (AttributeError, ValueError):  # closed or replaced streams
        return False


def run_app(argv: Sequence[str]) -> int:
    """Run the terminal app; exec the lead CLI afterwards if it asked for that."""
    gc.enable()  # the app runs for hours (see `main`)
    args = list(argv)
    wants_help = any(a in ("-h", "--help") for a in args)
    ns = app_parser(commands_help=_commands_help() if wants_help else None).parse_args(args)
    root = ns.project_root or _default_root()
    if root is None:
        return 2
    if not root.is_dir():
        what = "no such directory" if not root.exists() else "not a directory"
        print(f"okstra: --project-root {inert(root)}: {what}", file=sys.stderr)
        return 2
    if not _has_terminal():
        print(NO_TERMINAL, file=sys.stderr)
        return 2
    from okstra_core.errors import OkstraError
    from okstra_core.records import fields_of

    from .app import make_app  # deferred: importing textual is the slow part

    try:
        app = make_app(project_root=root, **fields_of(ns, "state host entry_mode task_type launch"))
    except OkstraError as exc:  # e.g. a broken text catalog: named, not a traceback
        print(f"okstra: {inert(exc.render(), keep_newlines=True)}", file=sys.stderr)
        return 1
    # While the app owns the terminal a SIGINT makes it exit with 130 (after it: `_run`).
    watching = WhileTheAppRuns(app)
    signal.signal(signal.SIGINT, watching)
    try:
        request = app.run()
    finally:
        interrupt.as_python()
    if watching.seen:
        print(interrupt.LINE, file=sys.stderr, flush=True)
        return interrupt.EXIT_INTERRUPTED
    if app.return_code:
        return app.return_code
    if request is None:
        if app.launched_run is not None:
            print(inert(app.launched_run, keep_newlines=True))
        elif app.saved_setup is not None:
            print(app.text.get("app.quit.saved", project=inert(app.saved_setup)))
        return 0
    # Textual restored the terminal: hand it to the lead CLI.
    env = dict(os.environ if request.env is None else request.env)
    if request.run_dir is not None:
        return _lead_in_foreground(request, env)
    os.chdir(request.cwd)
    try:
        os.execvpe(request.argv[0], list(request.argv), env)
    except OSError as exc:
        print(f"okstra: could not start {inert(request.argv[0])}: {exc.strerror}", file=sys.stderr)
        return 1
    return 0  # not reached: execvpe replaced the process


def _lead_in_foreground(request: Any, env: dict[str, str]) -> int:
    """Run the lead as okstra's foreground child and record its exit (a lead that ended
    at once gets the doctor and resume hint on stderr)."""
    from okstra_core.environment import Environment
    from okstra_core.errors import OkstraError
    from okstra_core.life.foreground import run_foreground

    try:
        code, said = run_foreground(
            request.run_dir,
            list(request.argv),
            env,
            request.cwd,
            Environment.real(),
            say=lambda line: print(inert(line, keep_newlines=True), file=sys.stderr, flush=True),
            resumed=request.resumed,
        )
    except OkstraError as exc:
        print(f"okstra: {inert(exc.render(), keep_newlines=True)}", file=sys.stderr)
        return 1
    if said is not None:
        print(inert(said), file=sys.stderr, flush=True)
    return code


class WhileTheAppRuns:
    """The SIGINT handler while the app runs: the app exits with 130 and `seen` tells the
    entry point to say so; outside the app's event loop, `interrupt.now`."""

    def __init__(self, app: App[Any]) -> None:
        self.app = app
        self.seen = False

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        asyncio = sys.modules.get("asyncio")
        try:
            loop = asyncio.get_running_loop() if asyncio is not None else None
        except RuntimeError:
            loop = None
        if loop is None:
            interrupt.now(signum, frame)
            return
        self.seen = True
        loop.call_soon_threadsafe(self.app.exit, None, interrupt.EXIT_INTERRUPTED)


def wants_version(args: Sequence[str]) -> bool:
    """`--version` anywhere before a `--` (after which words are operands)."""
    words = list(args)
    return "--version" in words[: words.index("--") if "--" in words else None]


def cli() -> NoReturn:
    """The `okstra` command (and `python -m okstra_tui`): `main`, then exit.

    After a headless command (its output flushed, its files closed, the exit handlers
    run) the process ends at once (`os._exit`): tearing the interpreter down took
    longer than the command itself on a pool of ten thousand models.
    """
    if "_ARGCOMPLETE" in os.environ:  # the shell asks for completions
        from okstra_core.cli._completion import complete

        complete()
    code, headless = _run(sys.argv[1:])
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, ValueError):  # the reader went away: nothing to flush
        pass
    interrupt.said_all()
    if headless:
        atexit._run_exitfuncs()
        os._exit(code)
    sys.exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    """Run okstra with `argv` (default: the command line); return the exit status."""
    return _run(list(sys.argv[1:] if argv is None else argv))[0]


def _run(args: list[str]) -> tuple[int, bool]:
    """(exit status, whether a headless command ran).

    A headless command runs without the cyclic GC: on a pool of ten thousand models it
    ran ~200 times in one `wizard show`, a fifth of its time, freeing almost nothing.
    The app (which runs for hours) turns it back on, and so does a caller of `main`.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        if wants_version(args):
            from okstra_core import __version__

            print(f"okstra {__version__}")
            return 0, False
        from okstra_core.cli import COMMANDS
        from okstra_core.cli._app import command_word

        # `okstra --help` falls through to the app parser, whose help lists the commands.
        if command_word(args) in COMMANDS:
            from okstra_core.cli import main as cli_main

            interrupt.as_python()  # the headless CLI ends its own interrupts (130)
            return cli_main(args), True
        try:
            return run_app(args), False
        except KeyboardInterrupt:
            print(interrupt.LINE, file=sys.stderr, flush=True)
            return interrupt.EXIT_INTERRUPTED, False
    finally:
        if collecting:
            gc.enable()
