"""The headless CLI's argparse parser (built only for the running command)."""

from __future__ import annotations

import argparse
import importlib
from typing import NoReturn

from .. import __version__
from ..errors import UsageError

# The module that registers each command, in the order of the help. A run builds its own
# command's parser only: registering the others imports what their flags need, which
# `okstra wizard step` would pay for on every step. An unknown command (or none): all.
_REGISTRARS = {
    "models": "_models", "team": "_models", "wizard": "_wizard", "prepare": "_prepare",
    "report": "_prepare", "resume": "_resume", "runs": "_runs", "status": "_runs",
    "attach": "_runs", "stop": "_runs", "doctor": "_doctor", "trust": "_trust",
    "worker": "_worker", "mcp": "_mcp", "completion": "_completion", "schema": "_schema",
    "demo": "_demo",
}  # fmt: skip


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing usage and exiting."""

    def error(self, message: str) -> NoReturn:
        # `okstra: ` is the front end's prefix: a subcommand says its own name after it
        # (`okstra: runs: …`), the top level nothing more (not `okstra: okstra: …`).
        prog = self.prog.removeprefix("okstra").strip()
        raise UsageError(f"{prog}: {message}" if prog else message)


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
    for name in (only,) if only is not None else dict.fromkeys(_REGISTRARS.values()):
        importlib.import_module(f"{__package__}.{name}").register(sub)
    return parser
