"""okstra's codex launch argv against the real `codex` (offline), in a private tmux server.

What really happens with the pinned codex (checked, and asserted below):
- Interactive codex needs a TTY, so it runs through okstra's own tmux backend.
- Not logged in, it stops at its sign-in screen and writes no rollout file: discovery
  honestly reports "pending discovery".
- With a dummy API key stored in the isolated CODEX_HOME (nothing is sent: offline) and
  the model-migration notice acknowledged, codex starts the session at once and writes
  `sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl`; okstra's discovery rule finds it and
  the rollout's base instructions are the lead prompt (model_instructions_file).
- A rejected argv exits 2 with `error: unexpected argument`.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from realcli_helpers import KICKOFF, MARKER, base_env, bundled, lead_prompt, require_cli

from okstra_core.environment import Environment
from okstra_core.launch import LaunchPlan, plan_launch, start

pytestmark = [pytest.mark.realcli, pytest.mark.tmux]
MODEL = "gpt-5.6-sol"


def _setup(tmp_path: Path, socket: str) -> tuple[Environment, Path, Path]:
    require_cli("codex")
    home = tmp_path / "home"
    codex_home = home / "codex"
    codex_home.mkdir(parents=True)  # codex wants CODEX_HOME to exist
    project = tmp_path / "project"
    project.mkdir()
    env = {
        **base_env(home),
        "CODEX_HOME": str(codex_home),
        "TERM": "xterm-256color",
        "OKSTRA_TMUX_SOCKET": socket,
    }
    return Environment(env=env), project, codex_home


def _plan(environment: Environment, project: Path) -> LaunchPlan:
    provider = bundled("codex")
    assert MODEL in {m.execution for m in provider.models}
    return plan_launch(
        provider,
        model=MODEL,
        prompt_file=lead_prompt(project.parent),
        kickoff=KICKOFF,
        project_root=project,
        environment=environment,
    )


def _screen(socket: str, target: str) -> str:
    return subprocess.run(
        ["tmux", "-L", socket, "capture-pane", "-p", "-t", target],
        capture_output=True,
        text=True,
        check=False,
    ).stdout


def _pane_alive(socket: str, target: str) -> bool:
    out = subprocess.run(
        ["tmux", "-L", socket, "display-message", "-p", "-t", target, "#{pane_dead}"],
        capture_output=True,
        text=True,
        check=False,
    )
    return out.returncode == 0 and out.stdout.strip() == "0"


def test_launch_argv_accepted_not_logged_in(tmp_path: Path, tmux_socket: str) -> None:
    environment, project, codex_home = _setup(tmp_path, tmux_socket)
    plan = _plan(environment, project)
    result = start(plan, "tmux", "codex-lead", project, environment, discover_timeout=3)
    assert result.error is None, result.error.render()
    assert result.window_ref is not None and _pane_alive(tmux_socket, result.window_ref)
    screen = _screen(tmux_socket, result.window_ref)
    assert "unexpected argument" not in screen and "error:" not in screen
    # No session before sign-in: okstra says so instead of guessing.
    assert result.pending_discovery and result.session_id is None
    assert not (codex_home / "sessions").exists()


def test_launch_is_discovered_once_codex_starts_a_session(tmp_path: Path, tmux_socket: str) -> None:
    environment, project, codex_home = _setup(tmp_path, tmux_socket)
    login = subprocess.run(
        [str(require_cli("codex")), "login", "--with-api-key"],
        input="sk-dummy-offline-not-a-key",
        env=dict(environment.env),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert login.returncode == 0, login.stderr
    with (codex_home / "config.toml").open("a", encoding="utf-8") as fh:
        fh.write(f'\n[notice.model_migrations]\n"{MODEL}" = "gpt-6-sol"\n')
    plan = _plan(environment, project)
    result = start(plan, "tmux", "codex-lead", project, environment, discover_timeout=30)
    assert result.error is None, result.error.render()
    assert result.session_id is not None, _screen(tmux_socket, result.window_ref or "")
    assert not result.pending_discovery
    (rollout,) = (codex_home / "sessions").rglob(f"rollout-*-{result.session_id}.jsonl")
    meta = json.loads(rollout.read_text(encoding="utf-8").splitlines()[0])["payload"]
    assert meta["id"] == result.session_id and meta["cwd"] == str(project)
    assert MARKER in json.dumps(meta["base_instructions"])
    resume = plan.resume_argv(result.session_id)
    assert resume is not None and resume[-1] == result.session_id and MODEL in resume


def test_negative_control_rejected_argv(tmp_path: Path, tmux_socket: str) -> None:
    environment, project, _ = _setup(tmp_path, tmux_socket)
    plan = _plan(environment, project)
    bad = [plan.argv[0], "--session-id", "x", *plan.argv[1:]]
    done = subprocess.run(
        bad,
        env=dict(environment.env),
        cwd=project,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2 and "error: unexpected argument" in done.stderr
    # Through the tmux backend the same rejection is a lead that exited at once.
    from dataclasses import replace

    result = start(
        replace(plan, argv=tuple(bad)),
        "tmux",
        "codex-bad",
        project,
        environment,
        discover=False,
        settle=15,
    )
    assert result.error is None and result.lead_exit is not None
    # tmux 3.3a sometimes reports a dead pane without its status (see watch.py).
    assert result.lead_exit.exit_status in (2, None)
    assert any("unexpected argument" in line for line in result.lead_exit.last_lines)
