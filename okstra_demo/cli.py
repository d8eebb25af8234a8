"""`okstra-demo-agent`: the demo agent's command line, as okstra's demo provider runs it.

okstra-demo-agent [--mcp-config FILE] lead --session-id ID --model M --prompt-file F [-- KICKOFF]
okstra-demo-agent lead --resume ID --model M
okstra-demo-agent worker --model M --access read-only|write [--result-file F]  < task
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from . import PROGRAM, __version__

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROGRAM,
        description="okstra demo agent — scripted, no model: leads or works on an okstra "
        "team without any model or network, so a newcomer sees a whole team at work.",
    )
    parser.add_argument("--version", action="version", version=f"{__version__} (okstra demo agent)")
    parser.add_argument(
        "--mcp-config",
        type=Path,
        metavar="FILE",
        help='okstra\'s MCP server of the run ({"mcpServers": {"okstra": …}}): the lead '
        "drives its team through the server's tools",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="lead|worker")
    lead = sub.add_parser("lead", help="lead a run: read the lead prompt, run the team")
    lead.add_argument("--session-id", help="the session id okstra minted")
    lead.add_argument("--resume", metavar="ID", help="resume the session ID")
    lead.add_argument("--model", required=True, help="the model (demo-lead)")
    lead.add_argument("--prompt-file", type=Path, help="the lead prompt okstra wrote")
    lead.add_argument("kickoff", nargs="?", default="", help="the first message")
    worker = sub.add_parser("worker", help="one worker's work: its task on standard input")
    worker.add_argument("--model", required=True, help="which work (demo-scout, …)")
    worker.add_argument("--access", choices=("read-only", "write"), default="read-only")
    worker.add_argument("--result-file", type=Path, help="where to write the final message")
    return parser


# What a lead or a worker runs is imported by it: okstra's readiness check asks every CLI
# on PATH its `--version` and `lead --help`, which load argparse alone.


def _worker(ns: argparse.Namespace) -> int:
    from .screen import Screen
    from .work import run_work

    screen = Screen()
    task = sys.stdin.read()
    screen.say(f"okstra demo agent — scripted, no model · worker · {ns.model} · {ns.access}")
    screen.work("reading the task")

    def say(line: str) -> None:
        screen.say(f"⏺ {line}")
        screen.work(line)

    result = run_work(ns.model, task, Path.cwd(), say, ns.access == "write")
    if ns.result_file is not None:
        ns.result_file.parent.mkdir(parents=True, exist_ok=True)
        temporary = ns.result_file.with_name(f".{ns.result_file.name}.{os.getpid()}.tmp")
        temporary.write_text(result + "\n", encoding="utf-8")
        os.replace(temporary, ns.result_file)
    screen.say(result)
    return 0


def _resume(ns: argparse.Namespace) -> int:
    from .screen import PROMPT, Screen

    screen = Screen()
    screen.say(f"okstra demo agent — scripted, no model · session {ns.resume} resumed")
    screen.say("This scripted lead has finished its turn; nothing is left to do.")
    if screen.tty and os.isatty(0):
        while True:
            try:
                line = input(PROMPT)
            except (EOFError, KeyboardInterrupt):
                return 0
            if line.strip() in ("/exit", "/quit", "exit", "quit"):
                return 0
    return 0


def main(argv: list[str] | None = None) -> int:
    ns = _parser().parse_args(argv)
    if ns.command == "worker":
        return _worker(ns)
    if ns.resume:
        return _resume(ns)
    if ns.prompt_file is None or not ns.session_id:
        print(f"{PROGRAM}: lead: --session-id and --prompt-file are required", file=sys.stderr)
        return 2
    from .lead import run_lead
    from .prompt import PromptError

    try:
        return run_lead(ns.prompt_file, ns.session_id, ns.model, ns.kickoff, ns.mcp_config)
    except (PromptError, OSError) as exc:
        print(f"{PROGRAM}: {exc}", file=sys.stderr)
        return 2
