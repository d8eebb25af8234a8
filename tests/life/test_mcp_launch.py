"""The lead's CLI is given the run's MCP server at launch, unless the person says no.

Through the installed `okstra prepare --dry-run` (the launch preview) and `--launch
none` runs: the argv the lead would get, the run's `mcp.json`, the lead prompt, and
`okstra mcp --print-config` for a host set up by hand.
"""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import orjson
import pytest
from worker_support import World

from tests.conftest import okstra_cmd


def _prepare(world: World, *extra: str) -> dict[str, Any]:
    proc = world.okstra(
        "prepare",
        "--project-root",
        str(world.project),
        "--task-group",
        "perf",
        "--task-id",
        "widget",
        "--task-type",
        "requirements-discovery",
        "--brief",
        "brief.md",
        "--host",
        "terminal",
        "--launch",
        "none",
        *extra,
    )
    doc: dict[str, Any] = orjson.loads(proc.stdout)
    assert proc.returncode == 0, doc
    return doc


def _server_argv(run_dir: str) -> list[str]:
    command = okstra_cmd()
    if command[0].endswith("/okstra"):
        return [command[0], "mcp", run_dir]
    return [os.path.realpath(command[0]), "-m", "okstra", "mcp", run_dir]


def test_a_claude_lead_gets_the_server_and_a_prompt_that_speaks_of_its_tools(
    tmp_path: Path,
) -> None:
    world = World(tmp_path)
    doc = _prepare(world)
    run_dir = doc["runDir"]
    argv = doc["leadArgv"]
    config = Path(run_dir) / "mcp.json"
    # Inserted right after the program: the preview shows exactly what runs.
    assert argv[1:5] == ["--mcp-config", str(config), "--allowedTools", "mcp__okstra"]
    assert argv[5] == "--session-id"
    entry = orjson.loads(config.read_bytes())["mcpServers"]["okstra"]
    assert [entry["command"], *entry["args"]] == _server_argv(run_dir)
    assert str(config) in [f["path"] for f in doc["files"]]
    prompt = (Path(run_dir) / "lead-prompt.md").read_text(encoding="utf-8")
    assert "## Your team as tools" in prompt and "`worker_wait`" in prompt
    assert "## Running workers through okstra" in prompt  # the shell fallback stays


@pytest.mark.parametrize("how", ["flag", "config"])
def test_no_mcp_keeps_shell_commands_only(tmp_path: Path, how: str) -> None:
    world = World(tmp_path)
    extra: tuple[str, ...] = ()
    if how == "flag":
        extra = ("--no-mcp",)
    else:
        config = Path(os.environ["OKSTRA_HOME"]) / "config" / "config.json"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(json.dumps({"mcp": False}), encoding="utf-8")
    doc = _prepare(world, *extra)
    assert "--mcp-config" not in doc["leadArgv"] and doc["leadArgv"][1] == "--session-id"
    assert not (Path(doc["runDir"]) / "mcp.json").exists()
    prompt = (Path(doc["runDir"]) / "lead-prompt.md").read_text(encoding="utf-8")
    assert "## Your team as tools" not in prompt
    assert "okstra worker wait" in prompt


def test_a_bad_mcp_setting_is_refused_by_name(tmp_path: Path) -> None:
    world = World(tmp_path)
    config = Path(os.environ["OKSTRA_HOME"]) / "config" / "config.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps({"mcp": "no"}), encoding="utf-8")
    proc = world.okstra("models", "--json")
    doc = orjson.loads(proc.stdout)
    assert proc.returncode == 2 and doc["field"] == "mcp" and doc["file"] == str(config)
    assert "expected true or false" in doc["error"]


def test_a_codex_lead_gets_its_config_keys(tmp_path: Path) -> None:
    world = World(tmp_path)
    doc = _prepare(world, "--role-model", "leader=codex/gpt-5.6-sol", "--dry-run")
    argv = doc["leadArgv"]
    assert argv[1] == "-c" and argv[3] == "-c" and argv[5] == "--no-daemon"
    key, _, value = argv[2].partition("=")
    assert key == "mcp_servers.okstra.command"
    args_key, _, args_value = argv[4].partition("=")
    assert args_key == "mcp_servers.okstra.args"
    parsed = tomllib.loads(f"command = {value}\nargs = {args_value}\n")
    assert [parsed["command"], *parsed["args"]] == _server_argv(doc["runDir"])
    assert not any(f["path"].endswith("mcp.json") for f in doc["files"])  # no file needed


def test_print_config_for_each_host(tmp_path: Path) -> None:
    world = World(tmp_path)
    world.prepare()
    want = _server_argv(str(world.run_dir))
    shown = world.okstra("mcp", world.run, "--print-config")
    assert shown.returncode == 0 and b".mcp.json" in shown.stderr
    entry = orjson.loads(shown.stdout)["mcpServers"]["okstra"]
    assert [entry["command"], *entry["args"]] == want and "trust" not in entry
    codex = world.okstra("mcp", world.run, "--print-config", "--for", "codex")
    table = tomllib.loads(codex.stdout.decode())["mcp_servers"]["okstra"]
    assert [table["command"], *table["args"]] == want
    gemini = world.okstra("mcp", world.run, "--print-config", "--for", "gemini")
    entry = orjson.loads(gemini.stdout)["mcpServers"]["okstra"]
    assert entry["trust"] is True and [entry["command"], *entry["args"]] == want
    code, doc = world.json("mcp", world.run, "--print-config", "--for", "codex")
    assert code == 0 and doc["command"] == want and doc["for"] == "codex"
    refused = world.okstra("mcp", "no-such-run-001", "--print-config")
    assert refused.returncode == 2 and b"no run no-such-run-001" in refused.stderr


def test_no_other_command_imports_the_sdk(tmp_path: Path) -> None:
    world = World(tmp_path)
    world.prepare()
    check = (
        "import sys\n"
        "from okstra_core.cli import main\n"
        "main(sys.argv[1:])\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types')\n"
        "                or m.startswith('okstra_core.mcp.'))\n"
        "print(loaded, file=sys.stderr)\n"
    )
    python = os.path.join(os.path.dirname(okstra_cmd()[0]), "python")
    for args in (
        ["worker", "status", world.run, "--json"],
        ["mcp", world.run, "--print-config"],
        ["status", world.run, "--json"],
    ):
        done = subprocess.run(
            [python, "-c", check, *args],
            cwd=world.project,
            env=world.env,
            capture_output=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert done.stderr.decode().strip().splitlines()[-1] == "[]", (args, done.stderr)
