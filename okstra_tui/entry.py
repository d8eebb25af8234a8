"""Console-script entry point.

A subcommand (`models`, `team`, `wizard`, `prepare`, `report`) goes to the headless
CLI in okstra_core without importing textual; no subcommand opens the app (textual
is imported lazily, only then).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    from okstra_core.cli import COMMANDS

    first = next((a for a in args if not a.startswith("-")), None)
    if first in COMMANDS or (args and args[0] in ("--version", "-h", "--help")):
        from okstra_core.cli import main as cli_main

        return cli_main(args)
    print("TUI not built yet")
    return 0
