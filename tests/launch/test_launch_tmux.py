"""The tmux backend against a real, private tmux server (never the user's)."""

from __future__ import annotations

import shutil
import stat
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from launch_helpers import NASTY, fake_env, read_log

from okstra_core.catalog.models import LaunchSpec, ModelSpec, ProviderSpec
from okstra_core.environment import Environment
from okstra_core.launch import LaunchPlan, plan_launch, start, tmux_commands

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


def _provider(new: tuple[str, ...]) -> ProviderSpec:
    return ProviderSpec(
        id="demo",
        display_label="Demo",
        cli="claude",
        roles=("leader",),
        launch=LaunchSpec(
            version=("{cli}", "--version"), new=new, resume=("{cli}", "--resume", "{session_id}")
        ),
        models=(ModelSpec(id="m", display="M", execution="m-1"),),
    )


NASTY_PROVIDER = _provider(
    (
        "{cli}",
        "--session-id",
        "{session_id}",
        "--model",
        "{model}",
        *(a.replace("{", "{{").replace("}", "}}") for a in NASTY),
        "--",
        "{kickoff}",
    )
)


@pytest.fixture
def socket() -> Iterator[str]:
    name = f"okstra-test-{uuid.uuid4().hex[:12]}"
    yield name
    subprocess.run(["tmux", "-L", name, "kill-server"], capture_output=True, check=False)


def _tmux(socket: str, *args: str) -> str:
    return subprocess.run(
        ["tmux", "-L", socket, *args], capture_output=True, text=True, check=True
    ).stdout


def _lingering_cli(bin_dir: Path, fake_bin) -> Path:  # type: ignore[no-untyped-def]
    """`claude` that records its argv (the shared fake) and then stays up like a real CLI."""
    recorder = fake_bin("claude", directory=bin_dir.parent / "recorder") / "claude"
    bin_dir.mkdir(parents=True, exist_ok=True)
    wrapper = bin_dir / "claude"
    wrapper.write_text(f'#!/bin/sh\n"{recorder}" "$@"\nexec sleep 60\n', encoding="utf-8")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return bin_dir


def _wait_log(log: Path) -> list[dict[str, object]]:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        calls = read_log(log)
        if calls:
            return calls
        time.sleep(0.05)
    raise AssertionError(f"the CLI never ran (no {log})")


def _plan(env: Environment, project: Path, provider: ProviderSpec = NASTY_PROVIDER) -> LaunchPlan:
    return plan_launch(
        provider,
        model="m-1; rm -rf ~",
        prompt_file=project / "p.md",
        kickoff="Begin; $(whoami) `id` a;",
        project_root=project,
        environment=env,
    )


def test_outside_tmux_opens_a_detached_session(socket: str, fake_bin, tmp_path: Path) -> None:
    project = tmp_path / "proj #{pane_id}; x"
    project.mkdir()
    log = tmp_path / "log.jsonl"
    env = fake_env(
        _lingering_cli(tmp_path / "bin", fake_bin), OKSTRA_TMUX_SOCKET=socket, FAKE_CLI_LOG=str(log)
    )
    plan = _plan(env, project)
    result = start(plan, "tmux", "auth/login: fix", project, env).raise_for_error()
    assert result.window_ref == "auth-login--fix:0"
    (call,) = _wait_log(log)
    assert call["argv"] == list(plan.argv[1:])  # every element exactly as planned
    assert call["cwd"] == str(project)
    windows = _tmux(
        socket,
        "list-windows",
        "-a",
        "-F",
        "#{session_name}:#{window_index} #{window_name} #{pane_dead} #{remain-on-exit}",
    )
    # Still running, and the window keeps remain-on-exit: its exit will be readable.
    assert windows.split() == ["auth-login--fix:0", "auth-login--fix", "0", "on"]
    assert result.pane_ref is not None and result.pane_ref.startswith("%")
    assert result.tmux_socket and Path(result.tmux_socket).name == socket
    again = start(plan, "tmux", "auth/login: fix", project, env).raise_for_error()
    assert again.window_ref == "auth-login--fix-2:0"


def test_inside_tmux_opens_a_window_in_the_current_session(
    socket: str, fake_bin, tmp_path: Path
) -> None:
    log = tmp_path / "log.jsonl"
    bin_dir = _lingering_cli(tmp_path / "bin", fake_bin)
    _tmux(socket, "new-session", "-d", "-s", "work", "-x", "80", "-y", "24")
    tmux_env = (
        _tmux(socket, "display-message", "-p", "-t", "work", "#{socket_path},#{pid},#{session_id}")
        .strip()
        .replace("$", "")
    )
    # The window inherits the tmux server's environment: give it the log through it.
    _tmux(socket, "set-environment", "-g", "FAKE_CLI_LOG", str(log))
    env = fake_env(bin_dir, TMUX=tmux_env)  # no OKSTRA_TMUX_SOCKET: TMUX alone decides
    plan = _plan(env, tmp_path)
    result = start(plan, "tmux", "task-7", tmp_path, env).raise_for_error()
    assert result.window_ref == "work:1"
    (call,) = _wait_log(log)
    assert call["argv"] == list(plan.argv[1:])
    names = _tmux(socket, "list-windows", "-t", "work", "-F", "#{window_name}").split()
    assert names[1] == "task-7"


def test_an_immediate_exit_is_a_lead_exit_and_its_pane_stays(
    socket: str, fake_bin, tmp_path: Path
) -> None:
    env = fake_env(
        fake_bin("claude"), OKSTRA_TMUX_SOCKET=socket, FAKE_CLI_EXIT="3", FAKE_CLI_SAY="boom"
    )
    plan = _plan(env, tmp_path)
    # A generous bound: the watch returns as soon as the pane is dead.
    result = start(plan, "tmux", "t", tmp_path, env, settle=15)
    assert result.error is None and result.window_ref == "t:0"
    assert result.watched == "exited" and result.lead_exit is not None
    # tmux 3.3a sometimes marks the pane dead without reporting the status (a race in
    # tmux itself): then the status is unknown, never a wrong one.
    assert result.lead_exit.exit_status in (3, None)
    assert result.lead_exit.headline().startswith(
        ("the lead exited 3 after", "the lead exited after")
    )
    assert "boom" in result.lead_exit.last_lines
    # The dead pane stays (remain-on-exit): `okstra status` reads the same end later.
    dead = _tmux(socket, "display-message", "-p", "-t", result.pane_ref or "", "#{pane_dead}")
    assert dead.strip() == "1"


def test_single_element_argv_is_not_run_by_a_shell(socket: str, fake_bin, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    odd = tmp_path / "odd bin; $(touch pwned)"
    fake_bin("claude", directory=odd)
    env = fake_env(odd, OKSTRA_TMUX_SOCKET=socket, FAKE_CLI_LOG=str(log))
    plan = _plan(env, tmp_path, _provider(("{cli}",)))
    start(plan, "tmux", "one", tmp_path, env).raise_for_error()
    (call,) = _wait_log(log)
    assert call["argv"] == []
    assert not (tmp_path / "pwned").exists()


def test_tmux_failures_are_launch_errors(fake_bin, tmp_path: Path) -> None:
    env = fake_env(fake_bin("claude"), TMUX="/nonexistent/socket,1,0")
    result = start(_plan(env, tmp_path), "tmux", "t", tmp_path, env)
    assert result.error is not None
    assert "tmux" in result.error.render() and "new-window" in result.error.render()
    no_tmux = Environment(
        env=dict(env.env), which_override=lambda c: None if c == "tmux" else env.which(c)
    )
    result = start(_plan(env, tmp_path), "tmux", "t", tmp_path, no_tmux)
    assert result.error is not None and "tmux is not installed" in result.error.render()


def test_dry_run_commands(fake_bin, tmp_path: Path) -> None:
    env = fake_env(fake_bin("claude"), OKSTRA_TMUX_SOCKET="s1")
    plan = _plan(env, tmp_path)
    (cmd,) = tmux_commands(plan, "x.y", tmp_path / "a#b", env)
    assert cmd[1:3] == ["-L", "s1"] and cmd[3] == "new-session"
    assert cmd[cmd.index("-c") + 1] == str(tmp_path / "a##b")
    dash = cmd.index("--", cmd.index("respawn-pane"))
    # Arguments ending in ";" are escaped for tmux's parser, the rest are untouched.
    assert cmd[dash + 1 : dash + 1 + len(plan.argv)] == [
        a[:-1] + "\\;" if a.endswith(";") else a for a in plan.argv
    ]
    # The window starts with a placeholder; remain-on-exit is on before the CLI starts.
    first, second = cmd.index(";"), cmd.index(";", cmd.index(";") + 1)
    assert cmd[first:second] == [";", "set-option", "-w", "remain-on-exit", "on"]
    assert cmd[second + 1 : second + 3] == ["respawn-pane", "-k"]
    assert dash > second
