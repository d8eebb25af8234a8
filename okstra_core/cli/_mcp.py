"""`okstra mcp <run>`: the run's MCP server on stdin/stdout (the SDK imported only then),
or `--print-config`: the snippet that adds it to a host by hand.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..display import inert
from ..errors import UsageError
from ..records import config, dataclass
from . import RUN_ARG, add_command, run_dir, say, seconds

if TYPE_CHECKING:
    import argparse

    from ..launch.mcp import Host

HOST_CHOICES = ("claude", "codex", "gemini")
# One `worker_wait` call's longest wait (seconds); see okstra_core/mcp/tools.py.
DEFAULT_SLICE = 50.0
MAX_SLICE = 3600.0


@dataclass(frozen=True, kw_only=True)
class McpSnippet:
    """`okstra mcp --print-config --json`: the host (`for`), the run, the server's
    command, the snippet that adds it to the host and where that goes."""

    __pydantic_config__ = config(camel_case=True, aliases={"host": "for"})

    ok: bool = True
    host: str
    run_dir: Path
    command: tuple[str, ...]
    snippet: str
    where: str


def register(sub: Any) -> None:
    """Add `mcp` to the top-level parser."""
    parser = add_command(
        sub, "mcp", "serve a run's team as MCP tools on stdin/stdout (for the lead's host)",
        "okstra mcp perf/widget/planning-001                  serve (a host runs this)",
        "okstra mcp planning-001 --print-config               claude's .mcp.json form",
        "okstra mcp planning-001 --print-config --for codex   ~/.codex/config.toml form",
        description="An MCP server for one run: team_status, worker_start, worker_wait, "
        "worker_result, worker_stop and report_finalize, each the same action as its "
        "`okstra worker`/`okstra report` command, with the same refusals. It serves "
        "until its client closes standard input. okstra registers it with the lead's "
        "host at launch; --print-config prints what adds it to a host by hand.",
        args=(
            RUN_ARG,
            ("--print-config", dict(action="store_true", help="print the snippet that adds "
                                    "this run's server to a host, and exit")),
            ("--for", dict(dest="host", choices=HOST_CHOICES,
                           help="the host of --print-config (default claude)")),
            ("--wait-slice", dict(type=seconds("--wait-slice", 1, MAX_SLICE),
                                  default=DEFAULT_SLICE, metavar="SECONDS",
                                  help="the longest one worker_wait call waits before "
                                  "answering with the members still running (default "
                                  f"{DEFAULT_SLICE:g}: under a host's 60 s per call)")),
            ("--json", dict(action="store_true",
                            help="with --print-config: print one JSON document")),
        ),
    )  # fmt: skip
    parser.set_defaults(handler=_mcp, human=_human)


def _mcp(ns: argparse.Namespace) -> tuple[McpSnippet | dict[str, Any], int]:
    from ..environment import Environment
    from ..launch.mcp import server_for, snippet, where
    from ..launch.sheet import find_okstra

    environment = Environment.real()
    run = run_dir(ns.run)
    if ns.print_config:
        server = server_for(run, find_okstra(environment))
        host: Host = ns.host or "claude"
        return McpSnippet(
            host=host,
            run_dir=run,
            command=tuple(server.argv),
            snippet=snippet(server, host),
            where=where(host),
        ), 0
    if ns.host is not None or ns.json:
        raise UsageError("--for and --json apply to --print-config", field="--print-config")
    from ..mcp.tools import serve  # the SDK: only when serving

    serve(run, environment, slice_seconds=ns.wait_slice)
    return {"ok": True, "served": True}, 0


def _human(result: McpSnippet | dict[str, Any]) -> None:
    if not isinstance(result, McpSnippet):
        return  # served: stdout was the protocol's, nothing more goes there
    say(result.snippet)
    print(f"okstra: {inert(result.where)}", file=sys.stderr)
