"""`okstra mcp <run>` driven by the MCP SDK's own client (stdio_client + ClientSession).

A run is prepared with fake worker CLIs (no lead launched); the client starts the
installed `okstra mcp` over stdio as a host would and drives a whole worker life
through the tools. Every wait synchronises on okstra's own answers (the tools'
results), and the fakes are released by files, never by a pause alone.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult
from worker_support import World, fake, read_jsonl

from tests.conftest import okstra_cmd

CODEX = "codex/gpt-5.6-sol"
TOOLS = {
    "team_status",
    "worker_start",
    "worker_wait",
    "worker_result",
    "worker_stop",
    "report_finalize",
    "worker_send",
    "worker_diff",
    "worker_merge",
    "worker_discard",
}


@pytest.fixture
def world(tmp_path: Path) -> World:
    w = World(tmp_path)
    w.prepare("--role-count", "analyser=2", "--role-model", f"analyser={CODEX}")
    return w


@asynccontextmanager
async def served(world: World, *extra: str) -> AsyncIterator[ClientSession]:
    command = okstra_cmd()
    params = StdioServerParameters(
        command=command[0],
        args=[*command[1:], "mcp", world.run, *extra],
        env=world.env,
        cwd=world.project,
    )
    with open(world.tmp / "mcp-stderr.log", "w", encoding="utf-8") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


async def call(session: ClientSession, name: str, **arguments: Any) -> CallToolResult:
    result = await session.call_tool(name, arguments)
    assert isinstance(result, CallToolResult)
    return result


def data(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


def text(result: CallToolResult) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def test_a_whole_worker_life_through_the_tools(world: World, tmp_path: Path) -> None:
    hold = tmp_path / "release"
    async with served(world, "--wait-slice", "3") as session:
        listed = await session.list_tools()
        assert {t.name for t in listed.tools} == TOOLS
        for tool in listed.tools:
            assert tool.input_schema["additionalProperties"] is False, tool.name
            assert tool.output_schema is not None, tool.name

        team = data(await call(session, "team_status"))
        shorts = [w["short"] for w in team["workers"]]
        assert shorts[:3] == ["leader#1", "analyser#1", "analyser#2"]
        assert team["runId"] == world.run and team["workers"][1]["state"] == "prepared"

        # Two workers: one held until the test releases it, one that ends at once.
        one = data(
            await call(
                session,
                "worker_start",
                who="analyser#1",
                prompt=fake("Check the codex side.", tag="w1", hold=str(hold)),
                surface="background",
            )
        )
        assert one["label"].startswith("analyser#1") and one["surface"] == "background"
        two = await call(
            session,
            "worker_start",
            who="analyser#2",
            prompt=fake("Analyse the widget.", tag="w2"),
            surface="background",
        )
        assert "worker_wait" in text(two)
        two_ref = data(two)["roleExecutionRef"]
        world.started("w1")

        # A short wait answers with the held one still running, and progress on the way.
        seen: list[tuple[float, float | None, str | None]] = []

        async def progress(done: float, total: float | None, message: str | None) -> None:
            seen.append((done, total, message))

        began = time.monotonic()
        result = await session.call_tool(
            "worker_wait", {"who": ["analyser#1", "analyser#2"]}, progress_callback=progress
        )
        assert isinstance(result, CallToolResult)
        waited = data(result)
        assert time.monotonic() - began < 10
        assert waited["timedOut"] is True and waited["exitCode"] == 124
        states = {w["short"]: w["state"] for w in waited["workers"]}
        assert states == {"analyser#1": "running", "analyser#2": "exited"}
        assert "call worker_wait again" in text(result)
        assert seen and seen[-1][1] == 3 and "analyser#1" in (seen[-1][2] or "")

        hold.write_text("go", encoding="utf-8")
        waited = data(await call(session, "worker_wait", who=["analyser#1", "analyser#2"]))
        while waited["timedOut"]:  # each call waits one slice; the lead calls again
            waited = data(await call(session, "worker_wait", who=["analyser#1"]))
        assert waited["exitCode"] == 0

        got = data(await call(session, "worker_result", who="analyser#1"))
        assert got["source"] == "result-file" and got["truncated"] is False
        assert got["text"] == "RESULT: Check the codex side.\n"
        got = data(await call(session, "worker_result", who="analyser#2"))
        assert got["text"] == "RESULT: Analyse the widget.\n"

        # A follow-up in analyser#2's own conversation, waited for and read the same way.
        sent = data(
            await call(
                session,
                "worker_send",
                who="analyser#2",
                prompt=fake("Follow up.", tag="w2b"),
                surface="background",
            )
        )
        assert sent["roleExecutionRef"] == two_ref
        waited = data(await call(session, "worker_wait", who=["analyser#2"]))
        while waited["timedOut"]:
            waited = data(await call(session, "worker_wait", who=["analyser#2"]))
        got = data(await call(session, "worker_result", who="analyser#2"))
        assert got["text"] == "RESULT: Follow up.\n"
        first = data(await call(session, "worker_result", who="analyser#2", turn=1))
        assert first["text"] == "RESULT: Analyse the widget.\n"

        # Another attempt that only a signal ends, stopped through the tool.
        again = data(
            await call(
                session,
                "worker_start",
                who="analyser#1",
                again=True,
                prompt=fake("Once more.", tag="w3", waitSignal=True),
                surface="background",
            )
        )
        world.started("w3")
        stopped = data(await call(session, "worker_stop", who=again["roleExecutionRef"], grace=5))
        assert stopped["wasRunning"] is True and stopped["worker"]["state"] == "stopped"

        report = world.project / f"final-report-{world.run}.json"
        report.write_text(json.dumps({"summary": "done"}), encoding="utf-8")
        done = data(await call(session, "report_finalize", data=report.name))
        refs = [r["roleExecutionRef"] for r in done["executionRoles"]]
        assert again["roleExecutionRef"] in refs and len(refs) == len(shorts) + 1
        written = orjson.loads(report.read_bytes())
        assert written["summary"] == "done" and written["executionIdentityVersion"] == 2

    # The manifest says what the CLI would: the same records, the same states.
    code, status = world.json("worker", "status", world.run)
    assert code == 0
    states = {w["short"]: w["state"] for w in status["workers"]}
    assert states["analyser#1"] == "exited" and states["analyser#2"] == "exited"
    assert states["analyser#3"] == "stopped" and states["leader#1"] == "prepared"


async def test_refusals_are_tool_errors_with_the_cli_s_message(world: World) -> None:
    cli_code, cli = world.json("worker", "wait", world.run, "nobody#1")
    assert cli_code == 2
    async with served(world) as session:
        refused = await call(session, "worker_wait", who=["nobody#1"])
        assert refused.is_error
        assert refused.structured_content == cli  # the same JSON error, message and field
        assert text(refused) == f"okstra: {cli['error']}"

        never = await call(session, "worker_result", who="analyser#1")
        assert never.is_error and "was never started" in text(never)

        empty = await call(session, "worker_start", who="analyser#1", prompt="   ")
        assert empty.is_error and empty.structured_content is not None
        assert empty.structured_content["field"] == "prompt"

        lead = await call(session, "worker_stop", who="leader#1")
        assert lead.is_error and "is the lead of the run" in text(lead)

        outside = await call(session, "report_finalize", data="../elsewhere.json")
        assert outside.is_error and "inside the run's project" in text(outside)
        own = await call(session, "report_finalize", data=".okstra/project.json")
        assert own.is_error and "okstra's own files" in text(own)

        tree = await call(session, "worker_diff", who="analyser#1")
        assert tree.is_error and "has no worktree of its own" in text(tree)
        unasked = await call(session, "worker_discard", who="analyser#1", yes=False)
        assert unasked.is_error and unasked.structured_content is not None
        assert unasked.structured_content["field"] == "yes"

        extra = await call(session, "team_status", run="another-run-001")
        assert extra.is_error  # no argument names another run: refused, not ignored
    # None of it changed the run.
    assert all(p["status"] == "prepared" for p in world.manifest()["participants"])
    assert not (world.run_dir / "workers").exists()


def test_it_ends_when_its_client_closes_stdin(world: World) -> None:
    proc = subprocess.Popen(
        [*okstra_cmd(), "mcp", world.run],
        cwd=world.project,
        env=world.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        },
    }
    proc.stdin.write(json.dumps(init).encode() + b"\n")
    proc.stdin.flush()
    answer = json.loads(proc.stdout.readline())
    assert answer["id"] == 1 and answer["result"]["serverInfo"]["name"] == "okstra"
    proc.stdin.close()
    assert proc.wait(timeout=30) == 0
    rest = proc.stdout.read()
    assert rest == b""  # nothing but the protocol on stdout
    assert b"Traceback" not in proc.stderr.read()


async def test_ten_concurrent_calls_lose_nothing(tmp_path: Path) -> None:
    world = World(tmp_path)
    world.prepare("--role-count", "analyser=1")
    async with served(world) as session:
        results: dict[int, CallToolResult] = {}

        async def start(n: int) -> None:
            results[n] = await call(
                session,
                "worker_start",
                who="analyser#1",
                again=True,
                prompt=fake(f"job {n}", tag=f"j{n}"),
                surface="background",
            )

        async with anyio.create_task_group() as group:
            for n in range(10):
                group.start_soon(start, n)
                group.start_soon(call, session, "team_status")
        refs = [data(results[n])["roleExecutionRef"] for n in range(10)]
        assert len(set(refs)) == 10
        waited = data(await call(session, "worker_wait", who=refs))
        while waited["timedOut"]:
            waited = data(await call(session, "worker_wait", who=refs))
        assert waited["exitCode"] == 0
    manifest = world.manifest()
    assert set(refs) <= {e["roleExecutionRef"] for e in manifest["roleExecutions"]}
    assert all(world.participant(r)["status"] == "exited" for r in refs)
    started = [e for e in world.events("worker-started") if e["roleExecutionRef"] in refs]
    assert len(started) == 10
    tags = {e["tag"] for e in read_jsonl(world.log) if e["event"] == "started"}
    assert tags == {f"j{n}" for n in range(10)}
