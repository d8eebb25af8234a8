"""The exec and none backends, and `choose_backend`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from launch_helpers import bundled, fake_env, read_log

from okstra_core.environment import Environment
from okstra_core.errors import LaunchError, OkstraError
from okstra_core.launch import choose_backend, exec_now, plan_launch, start


def test_choose_backend() -> None:
    assert choose_backend("auto", Environment(env={"TMUX": "/s,1,0"})) == "tmux"
    assert choose_backend("auto", Environment(env={})) == "exec"
    assert choose_backend("none", Environment(env={})) == "none"
    with pytest.raises(OkstraError, match="unknown launch backend 'screen'"):
        choose_backend("screen", Environment(env={}))


def test_exec_and_none_run_nothing(fake_bin, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    env = fake_env(fake_bin("gemini"), FAKE_CLI_LOG=str(log))
    plan = plan_launch(
        bundled("antigravity"),
        model="g",
        prompt_file=tmp_path / "p.md",
        kickoff="go",
        project_root=tmp_path,
        environment=env,
    )
    result = start(plan, "exec", "w", tmp_path, env).raise_for_error()
    assert result.exec_argv == plan.argv
    assert result.exec_env is not None
    assert result.exec_env["GEMINI_SYSTEM_MD"] == str(tmp_path / "p.md")
    assert result.exec_env["FAKE_CLI_LOG"] == str(log)
    none = start(plan, "none", "w", tmp_path, env)
    assert none.exec_argv is None and none.session_id == plan.session_id
    assert read_log(log) == []
    with pytest.raises(LaunchError, match="nothing to exec"):
        exec_now(none)


EXEC_SCRIPT = """
import sys
from pathlib import Path
from okstra_core.catalog.loaders import load_provider
from okstra_core.environment import Environment
from okstra_core.launch import exec_now, plan_launch, start
env = Environment.real()
project = Path(sys.argv[1])
plan = plan_launch(load_provider(Path(sys.argv[2]), bundled=True), model="m",
                   prompt_file=project / "p.md", kickoff="go; $(x)", project_root=project,
                   environment=env)
exec_now(start(plan, "exec", "w", project, env))
"""


def test_exec_now_replaces_the_process(fake_bin, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    provider = Path(__file__).resolve().parents[2] / "prompts" / "providers" / "claude.toml"
    env = {
        "PATH": f"{fake_bin('claude')}:/usr/bin:/bin",
        "FAKE_CLI_LOG": str(log),
        "OKSTRA_HOME": str(tmp_path),
    }
    done = subprocess.run(
        [sys.executable, "-c", EXEC_SCRIPT, str(tmp_path), str(provider)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        cwd="/",
    )
    assert done.returncode == 0, done.stderr
    (call,) = read_log(log)
    assert call["cwd"] == str(tmp_path)
    assert call["argv"][-2:] == ["--", "go; $(x)"] and call["argv"][0] == "--session-id"
