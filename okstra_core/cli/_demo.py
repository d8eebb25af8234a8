"""`okstra demo [DIR] [--surface tmux|background]`: the demo team at work, followed
(`okstra_core.demo.run_demo`); exit 0 when the team finished and the report checks.
"""

from __future__ import annotations

import sys
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..records import config, dataclass
from . import add_command

if TYPE_CHECKING:
    import argparse

    from ..demo import DemoRun
    from ..life.workers.observe import WorkerState

DESCRIPTION = """\
Copy okstra's demo project (a small word counter with a known bug and a brief) into
DIR — a new directory; without DIR, a fresh one whose path is printed — trust it,
prepare a requirements-discovery run with the demo team (okstra's scripted demo agent:
no model, no login, no network), launch its lead and follow the team to its end: each
member's state, then the final report's path. Exit 0 when the team finished and the
report passes `okstra report check`.
"""


def register(sub: Any) -> None:
    """Add `demo` to the top-level parser."""
    add_command(
        sub, "demo",
        "see a whole team at work on a copy of the demo project (no agent CLI needed)",
        "okstra demo                          a fresh directory, printed",
        "okstra demo ~/okstra-demo --surface tmux",
        "okstra demo /tmp/d --surface background   no terminal: the lead ends after the report",
        description=DESCRIPTION,
        args=(
            ("dir", dict(nargs="?", metavar="DIR", help="a new directory for the copy")),
            ("--surface", dict(choices=("tmux", "background"), help="where the lead runs: a "
                               "tmux window (workers in its panes), or in the background "
                               "without a terminal (default: tmux inside tmux, else background)")),
            ("--no-mcp", dict(dest="mcp", action="store_const", const=False, default=None,
                              help="do not give the lead okstra's MCP server: it drives its "
                              "team with okstra's commands (default: the user config's `mcp`, "
                              "true: through the server's tools)")),
        ),
    ).set_defaults(handler=_demo, human=_human)  # fmt: skip


def _say(line: str) -> None:
    print(line, flush=True)


@dataclass(frozen=True, kw_only=True)
class DemoReply:
    """`okstra demo`: how the demo went (its JSON document; `DemoRun`, with the surface)."""

    __pydantic_config__ = config(camel_case=True, aliases={"report_ok": "reportChecks"})

    ok: bool
    project: Path
    run_dir: Path
    report: Path
    report_ok: bool
    lead_status: int | None
    surface: str
    members: tuple[WorkerState, ...]

    @classmethod
    def of(cls, run: DemoRun, surface: str) -> DemoReply:
        own = {f.name: getattr(run, f.name) for f in fields(cls) if f.name != "surface"}
        return cls(surface=surface, **own)


def _demo(ns: argparse.Namespace) -> tuple[DemoReply, int]:
    from ..demo import Surface, run_demo
    from ..environment import Environment

    environment = Environment.real()
    surface: Surface = ns.surface or ("tmux" if environment.get("TMUX") else "background")
    target = Path(ns.dir) if ns.dir else None
    run = run_demo(target, surface=surface, environment=environment, say=_say, mcp=ns.mcp)
    reply = DemoReply.of(run, surface)
    return reply, 0 if reply.ok else 1


def _human(reply: DemoReply) -> None:
    run = reply.run_dir.name
    if reply.report_ok:
        _say(f"okstra demo: the report: {reply.report}")
        _say(f"okstra demo:   written by the team: {reply.report.with_suffix('.md')}")
    else:
        _say(f"okstra demo: no report that checks at {reply.report}")
    if reply.surface == "tmux" and reply.lead_status is None:
        _say(f"okstra demo: the lead waits at its prompt — see it: okstra attach {run}")
        _say(f"okstra demo: stop it: okstra stop {run}")
    _say(f"okstra demo: the run: okstra status {run}   (in {reply.project})")
    verdict = "the team finished" if reply.ok else "the team did not finish"
    print(f"okstra demo: {verdict}", file=sys.stdout if reply.ok else sys.stderr)
