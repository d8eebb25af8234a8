"""`python -m bench [--repeat N] [--only a,b,...,l] [--keep]`: print the table of figures.

Each measurement runs in its own temporary directory with its own OKSTRA_HOME and a
PATH of fake provider CLIs; nothing touches the real user directories. A measurement
whose subject is not built (or fails) prints why, never a made-up number.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from . import (
    _demo_minute,
    _first_minute,
    _mcp,
    _next_prompt,
    _preflight,
    _scale,
    _scripted_setup,
    _team_view,
    _tui,
    _wizard_step,
    _workers,
    _writers,
)
from ._harness import Figure, render_table

MEASUREMENTS: dict[str, tuple[str, Callable[[Path, int], list[Figure]]]] = {
    "a": ("headless wizard step", _wizard_step.measure),
    "b": ("next prompt on big pools", _next_prompt.measure),
    "c": ("scripted setup + prepare", _scripted_setup.measure),
    "d": ("terminal app", _tui.measure),
    "e": ("scale: 10,000 models over 50 providers", _scale.measure),
    "f": ("preflight, concurrent probes", _preflight.measure),
    "g": ("the team at run time: workers, status, the runs index", _workers.measure),
    "h": ("a newcomer's first minute: clone to a launched lead", _first_minute.measure),
    "i": ("the demo minute: no agent CLI, clone to the demo team's report", _demo_minute.measure),
    "j": ("a writer's worktree: worker start and worker diff --stat", _writers.measure),
    "k": ("the team as MCP tools: server up, team_status of 50", _mcp.measure),
    "l": ("the app's live team view: a refresh of 50 members", _team_view.measure),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--repeat", type=int, default=15, help="runs per figure (median)")
    parser.add_argument("--only", default="abcdefghijkl", help="which measurements, e.g. 'ab'")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="okstra-bench-"))
    figures: list[Figure] = []
    started = time.perf_counter()
    print(
        f"okstra bench — Python {platform.python_version()}, {platform.system()} "
        f"{platform.machine()}, {os.cpu_count()} CPUs, repeat {args.repeat}",
        flush=True,
    )
    for key, (title, measure) in MEASUREMENTS.items():
        if key not in args.only.replace(",", ""):
            continue
        print(f"  ({key}) {title}…", file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        try:
            figures.extend(measure(work / key, args.repeat))
        except Exception as exc:  # a broken subject is a row that says so, not a crash
            if os.environ.get("OKSTRA_DEBUG") == "1":
                traceback.print_exc()
            figures.append(
                Figure(f"({key}) {title}", missing=f"failed: {type(exc).__name__}: {exc}"[:200])
            )
        print(f"      {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    print(render_table(figures))
    print(
        f"\ntotal {time.perf_counter() - started:.0f} s; ratio = subject median / baseline median"
    )
    if args.keep:
        print(f"kept {work}")
    else:
        import shutil

        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
