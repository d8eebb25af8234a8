"""(k) The team as MCP tools: `okstra mcp RUN` up, and `team_status` of 50 members.

* Up: from spawning `okstra mcp RUN` to its answer to `initialize` (JSON-RPC over its
  stdin/stdout, as a host speaks it). Bar: ≤ 1.5 s. Baseline: a process that only
  imports the SDK's server (`from mcp.server.mcpserver import MCPServer`) — the floor
  of any server built on it.
* `team_status` of a run with 50 role executions (all ended), the server up: one
  `tools/call` answered. Bar: ≤ 100 ms. Baseline: the same query by the CLI,
  `okstra worker status RUN --json`, a whole process.

Each timed interleaved with its baseline; the same run for both.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

from ._fixtures import make_machine
from ._harness import Figure, NotAvailable, Stats, interleaved, okstra_argv, run, time_process
from ._workers import TEAM, _prepare, _settled

SDK_IMPORT = [sys.executable, "-c", "from mcp.server.mcpserver import MCPServer"]
SDK_IMPORT_NAME = "python -c 'from mcp.server.mcpserver import MCPServer'"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "okstra-bench", "version": "0"},
    },
}


def _send(stdin: IO[bytes], message: dict[str, Any]) -> None:
    stdin.write(json.dumps(message).encode() + b"\n")
    stdin.flush()


def _answer(stdout: IO[bytes], request_id: int) -> dict[str, Any]:
    while True:
        line = stdout.readline()
        if not line:
            raise NotAvailable("okstra mcp closed its output")
        message: dict[str, Any] = json.loads(line)
        if message.get("id") == request_id:
            return message


def _spawn(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        argv,
        env=env,
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )


def _up(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    """Seconds from spawn to the `initialize` answer (then stdin closed: it ends)."""
    began = time.perf_counter()
    proc = _spawn(argv, env, cwd)
    assert proc.stdin is not None and proc.stdout is not None
    _send(proc.stdin, INITIALIZE)
    answer = _answer(proc.stdout, 0)
    took = time.perf_counter() - began
    proc.stdin.close()
    proc.wait(timeout=30)
    if "result" not in answer:
        raise NotAvailable(f"initialize failed: {answer}")
    return took


def _status_calls(
    argv: list[str], env: dict[str, str], cwd: Path, count: int
) -> tuple[list[float], int]:
    """`count` team_status calls to one server; their times, and the members seen."""
    proc = _spawn(argv, env, cwd)
    assert proc.stdin is not None and proc.stdout is not None
    _send(proc.stdin, INITIALIZE)
    _answer(proc.stdout, 0)
    _send(proc.stdin, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    times: list[float] = []
    members = 0
    for n in range(1, count + 1):
        began = time.perf_counter()
        call = {"name": "team_status", "arguments": {}}
        _send(proc.stdin, {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": call})
        answer = _answer(proc.stdout, n)
        times.append(time.perf_counter() - began)
        result = answer.get("result") or {}
        if result.get("isError") or "structuredContent" not in result:
            raise NotAvailable(f"team_status failed: {str(answer)[:200]}")
        members = len(result["structuredContent"]["workers"])
    proc.stdin.close()
    proc.wait(timeout=30)
    return times, members


def measure(work: Path, repeat: int) -> list[Figure]:
    okstra = okstra_argv()
    try:
        machine = make_machine(work / "mcp")
        env, project = machine.env, machine.project
        run_dir = _prepare(machine, okstra)
        start = [*okstra, "worker", "start", str(run_dir), "analyser#1", "--again"]
        start += ["--surface", "background", "--prompt", "Say hello."]
        while (
            len(json.loads((run_dir / "run-manifest.json").read_bytes())["roleExecutions"]) < TEAM
        ):
            run(start, env=env, cwd=project, what="okstra worker start")
        _settled(run_dir)
        serve = [*okstra, "mcp", str(run_dir)]
        up, sdk = interleaved(
            lambda: _up(serve, env, project),
            lambda: time_process(SDK_IMPORT, env=env, cwd=project),
            repeat=repeat,
        )
        figures = [
            Figure(
                "(k) `okstra mcp` up (spawn → initialize answered)",
                up,
                sdk,
                SDK_IMPORT_NAME,
                note="bar: ≤ 1.5 s",
            )
        ]
        calls, members = _status_calls(serve, env, project, repeat + 1)
        status = [*okstra, "worker", "status", str(run_dir), "--json"]
        cli = [time_process(status, env=env, cwd=project) for _ in range(repeat)]
        figures.append(
            Figure(
                f"(k) MCP `team_status`, {members} members, server up",
                Stats(tuple(calls[1:])),
                Stats(tuple(cli)),
                "`okstra worker status RUN --json` (the same query by the CLI)",
                note=f"bar: ≤ 100 ms; first call {calls[0] * 1e3:.0f} ms",
            )
        )
        return figures
    except NotAvailable as exc:
        return [Figure("(k) the team as MCP tools", missing=str(exc))]
