"""The real claude, codex and gemini (offline) accept okstra's MCP registration of a run.

What the pinned CLIs do with it (checked, and asserted below):
- claude: the lead argv okstra plans, `--mcp-config <run>/mcp.json --allowedTools
  mcp__okstra` included, passes its parser (not logged in: exit 1, "Not logged in").
  The same file as a project's `.mcp.json` (the documented equivalent of
  `--mcp-config` that `claude mcp list` reads), once project servers are approved,
  is parsed and health-checked: claude starts `okstra mcp <run>` and it answers
  (`✔ Connected`). A server that cannot start is reported as failing: the check is
  real.
- codex: `-c mcp_servers.okstra.command=… -c mcp_servers.okstra.args=…` pass its
  parser, and `codex mcp list --json` lists the server with exactly okstra's command
  and arguments.
- gemini 0.61: with `GEMINI_CLI_SYSTEM_SETTINGS_PATH` naming the run's file (okstra's
  `[launch] mcp_env`), `gemini mcp list` in a trusted folder lists the server with
  okstra's command and arguments (offline it cannot connect: "Disconnected"). It skips
  that file with a "Security Warning" when a directory above it is writable by group
  or others (a project under /tmp, say).
"""

from __future__ import annotations

import json
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from realcli_helpers import CLI_BIN, KICKOFF, REPO, base_env, bundled, lead_prompt, require_cli

from okstra_core.environment import Environment
from okstra_core.launch import plan_launch
from okstra_core.launch.mcp import server_for
from tests.conftest import okstra_cmd

pytestmark = [pytest.mark.realcli]


def _prepared(tmp_path: Path) -> tuple[Path, dict[str, Any], dict[str, str]]:
    """A run with a claude lead (`--launch none`), and the lead's isolated environment."""
    require_cli("claude")
    home = tmp_path / "home"
    project = tmp_path / "project"
    home.mkdir()
    project.mkdir()
    (project / "brief.md").write_text("Speed up the widget.\n", encoding="utf-8")
    env = {**base_env(home), "CLAUDE_CONFIG_DIR": str(home / "claude")}
    # A dummy key only for preflight's login check (nothing is sent: offline).
    done = subprocess.run(
        [
            *okstra_cmd(),
            "prepare",
            "--project-root",
            str(project),
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
            "--role-count",
            "analyser=1",
            "--role-model",
            "analyser=claude/sonnet-4.6",
            "--role-model",
            "report-writer=claude/sonnet-4.6",
        ],
        env={**env, "ANTHROPIC_API_KEY": "sk-dummy-offline"},
        cwd=project,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()
    return project, json.loads(done.stdout), env


def _claude(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_claude_accepts_the_lead_argv_with_the_mcp_server(tmp_path: Path) -> None:
    project, doc, env = _prepared(tmp_path)
    argv = doc["leadArgv"]
    assert argv[1:5] == [
        "--mcp-config",
        str(Path(doc["runDir"]) / "mcp.json"),
        "--allowedTools",
        "mcp__okstra",
    ]
    done = _claude([str(CLI_BIN / "claude"), *argv[1:]], env, project)
    assert done.returncode == 1 and "Not logged in" in done.stdout, (done.stdout, done.stderr)
    assert "error:" not in done.stderr


def test_claude_parses_the_config_and_connects_to_the_server(tmp_path: Path) -> None:
    project, doc, env = _prepared(tmp_path)
    shutil.copyfile(Path(doc["runDir"]) / "mcp.json", project / ".mcp.json")
    settings = Path(env["CLAUDE_CONFIG_DIR"])
    settings.mkdir(parents=True, exist_ok=True)
    (settings / "settings.json").write_text(
        json.dumps({"enableAllProjectMcpServers": True}), encoding="utf-8"
    )
    listed = _claude([str(CLI_BIN / "claude"), "mcp", "list"], env, project)
    assert listed.returncode == 0, (listed.stdout, listed.stderr)
    (line,) = [x for x in listed.stdout.splitlines() if x.startswith("okstra:")]
    assert f"mcp {doc['runDir']}" in line and "Connected" in line, listed.stdout

    # Negative control: a server that cannot start is not reported connected.
    broken = json.loads((project / ".mcp.json").read_text(encoding="utf-8"))
    broken["mcpServers"]["okstra"]["args"] = ["mcp", str(tmp_path / "no-such-run")]
    (project / ".mcp.json").write_text(json.dumps(broken), encoding="utf-8")
    listed = _claude([str(CLI_BIN / "claude"), "mcp", "list"], env, project)
    (line,) = [x for x in listed.stdout.splitlines() if x.startswith("okstra:")]
    assert "Failed to connect" in line and "✔" not in line, listed.stdout


def test_codex_parses_the_bundled_mcp_argv(tmp_path: Path) -> None:
    codex = require_cli("codex")
    home = tmp_path / "home"
    codex_home = home / "codex"
    codex_home.mkdir(parents=True)
    project = tmp_path / "project"
    run_dir = project / ".okstra" / "tasks" / "perf" / "widget" / "runs" / "impl-001"
    run_dir.mkdir(parents=True)
    environment = Environment(env={**base_env(home), "CODEX_HOME": str(codex_home)})
    server = server_for(run_dir, "/opt/okstra dir/bin/okstra")
    plan = plan_launch(
        bundled("codex"),
        model="gpt-5.6-sol",
        prompt_file=lead_prompt(tmp_path),
        kickoff=KICKOFF,
        project_root=project,
        environment=environment,
        mcp=server,
    )
    assert plan.argv[1:5] == plan.mcp_argv and plan.argv[5] == "--no-daemon"
    assert plan.mcp_config is None  # codex takes the keys themselves
    done = subprocess.run(
        [str(codex), *plan.mcp_argv, "mcp", "list", "--json"],
        env=dict(environment.env),
        cwd=project,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (entry,) = [s for s in json.loads(done.stdout) if s["name"] == "okstra"]
    assert entry["enabled"] is True and entry["transport"]["type"] == "stdio"
    assert entry["transport"]["command"] == "/opt/okstra dir/bin/okstra"
    assert entry["transport"]["args"] == ["mcp", str(run_dir)]

    # Negative control: a key codex does not know as a table is refused by its parser.
    bad = subprocess.run(
        [str(codex), "-c", "mcp_servers.okstra=[1", "mcp", "list", "--json"],
        env=dict(environment.env),
        cwd=project,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert bad.returncode != 0


# --------------------------------------------------------------------------- gemini


@pytest.fixture
def private_dir() -> Iterator[Path]:
    """A directory no one else may write to, up to `/`: gemini reads a system settings
    file only there (pytest's tmp_path is under the world-writable /tmp)."""
    base = REPO / ".cache"
    base.mkdir(exist_ok=True)
    for above in (base, *base.parents):
        if above.stat().st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            pytest.skip(f"{above} is writable by group or others: gemini would skip the file")
    path = Path(tempfile.mkdtemp(prefix="realcli-gemini-", dir=base))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _gemini_mcp_list(root: Path) -> tuple[str, str, subprocess.CompletedProcess[str]]:
    """`gemini mcp list` in a project of `root` whose run has okstra's server, with
    the environment okstra launches the lead with; (command, run dir, what it said)."""
    gemini = require_cli("gemini")
    home = root / "home"
    home.mkdir()
    project = root / "project"
    run_dir = project / ".okstra" / "tasks" / "perf" / "widget" / "runs" / "impl-001"
    run_dir.mkdir(parents=True)
    env = {**base_env(home), "GEMINI_CLI_HOME": str(home), "GEMINI_CLI_TRUST_WORKSPACE": "true"}
    environment = Environment(env=env)
    command = "/opt/okstra dir/bin/okstra"
    plan = plan_launch(
        bundled("antigravity"),
        model="gemini-3-pro-preview",
        prompt_file=lead_prompt(root),
        kickoff=KICKOFF,
        project_root=project,
        environment=environment,
        mcp=server_for(run_dir, command),
    )
    assert plan.mcp_argv == () and plan.mcp_config is not None
    assert plan.env["GEMINI_CLI_SYSTEM_SETTINGS_PATH"] == str(plan.mcp_config)
    Path(plan.mcp_config).write_bytes(plan.mcp_config_bytes or b"")
    done = subprocess.run(
        [str(gemini), "mcp", "list"],
        env={**env, **plan.env},
        cwd=project,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return command, str(run_dir), done


def test_gemini_lists_the_server_from_the_run_settings(private_dir: Path) -> None:
    command, run_dir, done = _gemini_mcp_list(private_dir)
    assert done.returncode == 0, (done.stdout, done.stderr)
    said = done.stdout + done.stderr  # 0.61 prints the list on stderr
    (line,) = [x for x in said.splitlines() if "okstra:" in x]
    assert f"okstra: {command} mcp {run_dir} (stdio)" in line, said
    assert "Disabled" not in line and "Skipping" not in said, said


def test_gemini_skips_run_settings_below_a_world_writable_directory(tmp_path: Path) -> None:
    # Negative control, and a limit of the form: below /tmp the file is not read.
    if not any(above.stat().st_mode & stat.S_IWOTH for above in tmp_path.parents):
        pytest.skip(f"no directory above {tmp_path} is writable by others (as /tmp is)")
    _, _, done = _gemini_mcp_list(tmp_path)
    assert "Skipping system settings file" in done.stderr, (done.stdout, done.stderr)
    assert "okstra:" not in done.stdout + done.stderr, (done.stdout, done.stderr)
