"""What each worker cost: read from its CLI's output, recorded per turn, shown and summed.

The reader is checked in process against the shapes the real CLIs print (claude 2.1.332
`-p --output-format json`, measured offline; codex 0.171 `exec --json` events); one run
then takes a fake claude, a fake codex, a CLI reporting nothing and a claude reporting a
malformed usage object through a whole turn (start, wait, status, result, report roles).
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from worker_support import World, fake

from okstra_core.cli._human import render_report_roles
from okstra_core.cli._worker import status_text
from okstra_core.documents.run import Turn, Usage
from okstra_core.environment import Environment
from okstra_core.life.actions import (
    team_status,
    worker_result,
    worker_send,
    worker_start,
    worker_wait,
)
from okstra_core.life.workers.usage import UsageReader, total_of, usage_shown, usage_text
from okstra_core.mcp.tools import team as team_text
from okstra_core.records import to_data

# What claude 2.1.332 printed offline (not logged in) for `-p --output-format json`,
# trimmed of fields okstra does not read; then the same with counts of a real turn.
CLAUDE_OFFLINE = (
    b'{"duration_api_ms":0,"stop_reason":"stop_sequence","session_id":"2b0d3f4e-1111-4222-'
    b'8333-944455556666","total_cost_usd":0,"usage":{"output_tokens_details":{"thinking_tokens"'
    b':0},"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,'
    b'"output_tokens":0,"server_tool_use":{"web_search_requests":0,"web_fetch_requests":0},'
    b'"service_tier":"standard"},"modelUsage":{},"is_error":true,"num_turns":1,"subtype":'
    b'"success","result":"Not logged in \xc2\xb7 Please run /login","type":"result"}\n'
)
CLAUDE_TURN = orjson.dumps(
    {
        "type": "result",
        "result": "The widget is slow because it re-renders.\n\nFix: memoise it.",
        "usage": {
            "input_tokens": 12,
            "cache_creation_input_tokens": 3000,
            "cache_read_input_tokens": 9000,
            "output_tokens": 845,
        },
        "total_cost_usd": 0.0421,
    }
)
CODEX_TURN = b"\n".join(
    orjson.dumps(event)
    for event in (
        {"type": "thread.started", "thread_id": "01a237d0-7ab3-7563-8540-099a169df0c7"},
        {"type": "turn.started"},
        {"type": "error", "message": "Reconnecting... 2/5"},
        {"type": "item.completed", "item": {"id": "i0", "type": "reasoning", "text": "Looking"}},
        {
            "type": "item.started",
            "item": {"id": "i1", "type": "command_execution", "command": "rg widget"},
        },
        {
            "type": "item.completed",
            "item": {"id": "i1", "type": "command_execution", "exit_code": 0},
        },
        {"type": "item.completed", "item": {"id": "i2", "type": "agent_message", "text": "Done."}},
        {
            "type": "turn.completed",
            "usage": {"input_tokens": 24000, "cached_input_tokens": 20000, "output_tokens": 900},
        },
    )
)


def _read(fmt: str | None, data: bytes, *, step: int = 0) -> tuple[bytes, UsageReader]:
    reader = UsageReader(fmt)
    pieces = [data[i : i + step] for i in range(0, len(data), step)] if step else [data]
    shown = b"".join(reader.feed(piece) for piece in pieces) + reader.finish()
    return shown, reader


@pytest.mark.parametrize("step", [0, 1, 7])
def test_claude_json_shows_the_answer_and_reads_tokens_and_cost(step: int) -> None:
    shown, reader = _read("claude-json", CLAUDE_TURN, step=step)
    assert shown == b"The widget is slow because it re-renders.\n\nFix: memoise it.\n"
    assert reader.usage == Usage(
        input_tokens=12 + 3000 + 9000, output_tokens=845, cached_input_tokens=9000, cost_usd=0.0421
    )
    # The real CLI's own bytes (a zero-cost error result) read the same way.
    shown, reader = _read("claude-json", CLAUDE_OFFLINE)
    assert shown == "Not logged in · Please run /login\n".encode()
    assert reader.usage == Usage(
        input_tokens=0, output_tokens=0, cached_input_tokens=0, cost_usd=0.0
    )


@pytest.mark.parametrize("step", [0, 5])
def test_codex_events_show_as_lines_and_read_token_counts(step: int) -> None:
    shown, reader = _read("codex-jsonl", CODEX_TURN, step=step)
    assert shown.decode().splitlines() == [
        "session id: 01a237d0-7ab3-7563-8540-099a169df0c7",
        "error: Reconnecting... 2/5",
        "Looking",
        "$ rg widget",
        "  exited 0",
        "Done.",
    ]
    assert reader.usage == Usage(input_tokens=24000, output_tokens=900, cached_input_tokens=20000)
    # Two turns in one output add up (no cost: codex reports none).
    _, twice = _read("codex-jsonl", CODEX_TURN + b"\n" + CODEX_TURN)
    assert twice.usage == Usage(input_tokens=48000, output_tokens=1800, cached_input_tokens=40000)


@pytest.mark.parametrize(
    ("fmt", "data", "text"),
    [
        ("claude-json", b'{"type":"result","result":"ok","usage":{"input_tokens":"9"}}', "ok\n"),
        ("claude-json", b'{"type":"result","result":"ok","usage":[1]}', "ok\n"),
        (
            "claude-json",
            b'{"type":"result","result":"ok","usage":{"input_tokens":1,"output_tokens":2},'
            b'"total_cost_usd":"0.1"}',
            "ok\n",
        ),
        ("claude-json", b'{"type":"result","result":"ok","usage":{"input_tokens":-1}}', "ok\n"),
        ("codex-jsonl", b'{"type":"turn.completed","usage":{"input_tokens":true}}', ""),
        ("codex-jsonl", b'{"type":"turn.completed"}', ""),
    ],
)
def test_a_malformed_usage_is_absent_and_the_text_still_shows(
    fmt: str, data: bytes, text: str
) -> None:
    shown, reader = _read(fmt, data + b"\n")
    assert shown.decode() == text and reader.usage is None


def test_what_is_not_its_json_passes_as_it_came() -> None:
    odd = b"plain text\n[1, 2]\n{broken\n" + b'{"type":"assistant"}\n' + b"no newline"
    shown, reader = _read("claude-json", odd)
    assert shown == odd + b"\n" and reader.usage is None
    # A provider without [usage]: nothing is read, nothing buffered.
    plain = UsageReader(None)
    assert plain.feed(b'{"type":"result"') == b'{"type":"result"' and not plain.active
    # A line longer than the reader keeps is shown as it comes.
    long = UsageReader("codex-jsonl", max_line=10)
    assert long.feed(b"x" * 25) == b"x" * 25 and long.feed(b"yy\nz") == b"yy\n"
    assert long.finish() == b"z\n"


def test_totals_and_their_words() -> None:
    claude = Usage(input_tokens=12000, output_tokens=845, cached_input_tokens=9000, cost_usd=0.04)
    codex = Usage(input_tokens=2_400_000, output_tokens=900, cached_input_tokens=None)
    assert total_of([None, None]) is None
    assert usage_text(None) == "—" and usage_shown(None) == "—" and usage_shown({"x": 1}) == "—"
    total = total_of([claude, codex, None])
    assert total is not None
    assert (total.input_tokens, total.output_tokens, total.cached_input_tokens) == (
        2_412_000,
        1745,
        9000,
    )
    assert (total.cost_usd, total.turns, total.turns_reported, total.turns_costed) == (
        0.04,
        3,
        2,
        1,
    )
    words = "2.41M in (9.0k cached) · 1.7k out (2 of 3 turns) · $0.0400 (1 of 3 turns)"
    assert usage_text(total) == words and usage_shown(to_data(total)) == words
    assert usage_text(total_of([claude])) == "12.0k in (9.0k cached) · 845 out · $0.0400"
    # A turn's usage is written on the turn, and read back.
    turn = Turn(number=1, started_at="2026-01-01T00:00:00+00:00", usage=claude)
    assert Turn.parse(turn.dump()) == turn and turn.dump()["usage"]["costUsd"] == 0.04


# --------------------------------------------------------------------------- a whole turn

MALFORMED = {"input_tokens": "lots", "output_tokens": -1}


def _short_refs(world: World) -> dict[str, str]:
    return {
        f"{e['role']}#{e['ordinal']}": e["roleExecutionRef"]
        for e in world.manifest()["roleExecutions"]
    }


def test_usage_through_a_whole_turn(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    world = World(tmp_path)
    world.prepare(
        "--role-count", "analyser=3", "--role-count", "critic=1",
        "--role-model", "analyser=claude/sonnet-4.6",
        "--role-model", "analyser=codex/gpt-5.6-sol",
        "--role-model", "analyser=antigravity/gemini-3-pro",
        "--role-model", "critic=claude/opus-4.6",
    )  # fmt: skip
    prompts = {
        "analyser#1": fake("Read the widget."),
        "analyser#2": fake("Check the codex side."),
        "analyser#3": fake("Nothing to report."),
        "critic#1": fake("Criticise it.", usage=MALFORMED),
    }
    # The core functions every front end calls, in process (each worker's supervisor
    # and CLI are real processes); the command line where its output is checked.
    environment = Environment(env=world.env)
    for who, prompt in prompts.items():
        worker_start(world.run_dir, environment, prompt=prompt, who=who, surface="background")
    assert worker_wait(world.run_dir, environment, list(prompts), timeout=60).exit_code == 0
    refs = _short_refs(world)

    # The answer, not the JSON: in `worker result`, the log; the JSON kept beside.
    proc = world.okstra("worker", "result", world.run, "analyser#1")
    assert proc.returncode == 0 and proc.stdout == b"RESULT: Read the widget.\n"
    assert worker_result(world.run_dir, environment, "critic#1").text == "RESULT: Criticise it.\n"
    claude_dir = world.worker_dir(refs["analyser#1"])
    assert b'"type"' not in (claude_dir / "output.log").read_bytes()
    assert orjson.loads((claude_dir / "events.jsonl").read_bytes())["total_cost_usd"] == 0.0123
    codex_log = (world.worker_dir(refs["analyser#2"]) / "output.log").read_text()
    assert "$ ls" in codex_log and '"type"' not in codex_log
    # codex's id came from its first event, shown as its header line.
    assert world.participant(refs["analyser#2"])["sessionRef"] in codex_log

    # Recorded per turn on the role execution (typed: the manifest reads back).
    (turn,) = world.execution(refs["analyser#1"])["turns"]
    turn_one = turn["usage"]
    assert turn_one == {
        "inputTokens": 2000, "outputTokens": 80, "cachedInputTokens": 500, "costUsd": 0.0123
    }  # fmt: skip
    (turn,) = world.execution(refs["analyser#2"])["turns"]
    assert turn["usage"] == {"inputTokens": 2000, "outputTokens": 120, "cachedInputTokens": 1500}
    for nothing in ("analyser#3", "critic#1"):
        assert "usage" not in world.execution(refs[nothing])["turns"][0]
    # exit.json carries it too: a look that records an end nobody recorded records it.
    assert orjson.loads((claude_dir / "exit.json").read_bytes())["usage"] == turn_one

    # `worker status` (and the MCP team_status: the same function), in JSON and for people.
    status = team_status(world.run_dir, environment)
    workers = [to_data(s) for s in status.workers if not s.leader]
    usage = {w["short"]: w["usage"] for w in workers}
    assert usage["analyser#1"]["costUsd"] == 0.0123 and usage["analyser#2"]["costUsd"] is None
    assert usage["analyser#3"] is None and usage["critic#1"] is None
    # The MCP tool's text says it too.
    said = team_text(status)
    assert "analyser#2  exited 0  codex/gpt-5.6-sol" in said and "usage 2.0k in (1.5k" in said
    table = status_text([s for s in status.workers if not s.leader])
    rows = {line.split()[0]: line for line in table.splitlines()[1:] if line.strip()}
    assert "2.0k in (500 cached) · 80 out · $0.0123" in rows["analyser#1"]
    assert "2.0k in (1.5k cached) · 120 out" in rows["analyser#2"]
    assert "$" not in rows["analyser#2"]
    assert " — " in rows["analyser#3"] and " — " in rows["critic#1"]
    shown = world.okstra("status", world.run).stdout.decode()
    assert "analyser#1  exited 0  claude/sonnet-4.6  usage 2.0k in (500 cached)" in shown
    assert "analyser#3  exited 0  antigravity/gemini-3-pro  usage —" in shown

    # `report roles`: per role execution, per role and for the run.
    code, report = world.json("report", "roles", world.run)
    assert code == 0
    by_row = {r["roleExecutionRef"]: r for r in report["executionRoles"]}
    assert by_row[refs["analyser#1"]]["usage"]["inputTokens"] == 2000
    assert by_row[refs["analyser#3"]]["usage"] is None
    by_role = {r["role"]: r["usage"] for r in report["usage"]["byRole"]}
    assert by_role["leader"] is None and by_role["critic"] is None
    assert by_role["analyser"] == {
        "inputTokens": 4000, "outputTokens": 200, "cachedInputTokens": 2000, "costUsd": 0.0123,
        "turns": 3, "turnsReported": 2, "turnsCosted": 1,
    }  # fmt: skip
    assert report["usage"]["run"] == {**by_role["analyser"], "turns": 4}
    total = "4.0k in (2.0k cached) · 200 out (2 of 4 turns) · $0.0123 (1 of 4 turns)"
    assert report["markdown"].splitlines()[-1] == f"| Run total | | | | | | | {total} |"
    render_report_roles(report)
    human = capsys.readouterr().out
    assert f"Run total: {total}" in human and "critic: —" in human

    # A follow-up turn (`worker send`, claude's `worker_resume`) records its own usage;
    # the worker's total adds its turns up.
    worker_send(world.run_dir, environment, "analyser#1", prompt=fake("Once more."))
    assert worker_wait(world.run_dir, environment, ["analyser#1"], timeout=60).exit_code == 0
    first, second = world.execution(refs["analyser#1"])["turns"]
    assert second["usage"] == first["usage"] and second["number"] == 2
    (again,) = [
        s for s in team_status(world.run_dir, environment).workers if s.short == "analyser#1"
    ]
    assert usage_text(again.usage) == "4.0k in (1.0k cached) · 160 out · $0.0246"
    assert worker_result(world.run_dir, environment, "analyser#1").text == "RESULT: Once more.\n"
