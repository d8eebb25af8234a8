"""The terminal app's own options (`okstra [app options]`), here so that help, `--version`
and completion see one command line; running the app is okstra_tui's.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..vocabulary import ENTRY_MODES
from . import add_arguments

if TYPE_CHECKING:
    import argparse

APP_EXAMPLES = """\
examples:
  okstra                          open the app for the project in the current directory
  okstra --project-root ~/src/app open it for another project
  okstra --state 20260115-093000  resume that setup directly
  okstra --launch tmux            start the lead session in a tmux window
  okstra completion bash >> ~/.bashrc   shell completion (bash, zsh, fish)

The app needs a terminal. Scripts use the headless commands, e.g.
  okstra wizard init --project-root . --task-type implementation-planning
  okstra prepare --state 20260115-093000 --dry-run
"""

# The app's options that take a value: `okstra --project-root demo` opens the app on
# `demo/`; the word after one of these is its value, never a command's name.
APP_VALUE_OPTIONS = (
    "--project-root", "--state", "--host", "--entry-mode", "--task-type", "--launch",
)  # fmt: skip


def command_word(args: list[str]) -> str | None:
    """The headless command `args` name (the first word that is no option or an app
    option's value), or None."""
    words = iter(args)
    for arg in words:
        if arg in APP_VALUE_OPTIONS:
            next(words, None)  # its value
        elif not arg.startswith("-"):
            return arg
    return None


LAUNCH_CHOICES = ("auto", "tmux", "exec", "none")


def app_parser(*, commands_help: str | None = None) -> argparse.ArgumentParser:
    """The app's options; `commands_help` (the headless CLI's help) goes at the end."""
    import argparse  # only when the app (or help) runs: a headless command never needs it

    epilog = APP_EXAMPLES if commands_help is None else f"{APP_EXAMPLES}\n{commands_help}"
    parser = argparse.ArgumentParser(
        prog="okstra",
        usage="okstra [app options]\n       okstra COMMAND ...  (headless, see below)",
        description="Set up and start a team of AI coding agents on one task.\n"
        "Without a command, okstra opens the terminal app with these options.\n"
        "Run it anywhere inside your project (or give --project-root): the project is\n"
        "the nearest directory holding .okstra, else the top of the git repository,\n"
        "else the current directory.",
        # The commands' help is argparse's own text: keep its line breaks.
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=epilog,
    )
    add_arguments(parser, (
        ("--project-root", dict(type=Path, default=None, metavar="DIR", help="the project to "
                                "set up (default: the nearest directory holding .okstra, else "
                                "the git repository's top, else the current directory)")),
        ("--state", dict(type=Path, default=None, metavar="FILE", help="open (or create) this "
                         "wizard state file directly (a bare name: in the wizards dir)")),
        ("--host", dict(default=None, metavar="ID",
                        help="host runtime: claude-code, codex or terminal (default: detected)")),
        ("--entry-mode", dict(choices=ENTRY_MODES, default=None, help="how the lead session "
                              "starts: a new process (default) or this host session")),
        ("--task-type", dict(default=None, metavar="TYPE", help="preselect the task type of a "
                             "new setup, e.g. implementation-planning")),
        ("--launch", dict(choices=LAUNCH_CHOICES, default="auto", help="how prepare starts the "
                          "lead session: auto = tmux inside tmux, else exec (this terminal, "
                          "after the app exits); none = print the command (default: auto)")),
    ))  # fmt: skip
    parser.add_argument("--version", action="store_true", help="print okstra's version and exit")
    return parser
