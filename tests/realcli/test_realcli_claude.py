"""okstra's claude launch and resume argv against the real `claude` parser (offline).

Facts relied on (measured against the real CLI, re-checked with the pinned version
2.1.332): an accepted argv
exits 1 with "Not logged in" and leaves a transcript recording the session id, the
model and the system prompt; a rejected argv exits 1 with stderr starting `error:`
and creates no config dir.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from realcli_helpers import KICKOFF, MARKER, base_env, bundled, lead_prompt, require_cli

from okstra_core.environment import Environment
from okstra_core.launch import LaunchPlan, plan_launch

pytestmark = pytest.mark.realcli
MODEL = "claude-opus-4-6"


def _setup(tmp_path: Path) -> tuple[dict[str, str], Path, Path]:
    require_cli("claude")
    home = tmp_path / "home"
    home.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    env = {**base_env(home), "CLAUDE_CONFIG_DIR": str(home / "claude-config")}
    return env, project, home / "claude-config"


def _run(
    argv: tuple[str, ...] | list[str], env: dict[str, str], cwd: Path
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(argv),
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _plan(env: dict[str, str], project: Path) -> LaunchPlan:
    provider = bundled("claude")
    assert MODEL in {m.execution for m in provider.models}
    return plan_launch(
        provider,
        model=MODEL,
        prompt_file=lead_prompt(project.parent),
        kickoff=KICKOFF,
        project_root=project,
        environment=Environment(env=env),
    )


def test_launch_argv_is_accepted_and_recorded(tmp_path: Path) -> None:
    env, project, config = _setup(tmp_path)
    plan = _plan(env, project)
    assert plan.argv[0] == str(require_cli("claude"))
    done = _run(plan.argv, {**env, **plan.env}, project)
    assert not done.stderr.startswith("error:"), done.stderr
    assert done.returncode == 1 and "Not logged in" in done.stdout, (done.stdout, done.stderr)
    slug = re.sub(r"[^A-Za-z0-9]", "-", str(project.resolve()))
    transcript = config / "projects" / slug / f"{plan.session_id}.jsonl"
    assert transcript.exists(), sorted(p.name for p in config.rglob("*.jsonl"))
    records = [json.loads(line) for line in transcript.read_text(encoding="utf-8").splitlines()]
    text = transcript.read_text(encoding="utf-8")
    assert {r.get("sessionId") for r in records} == {plan.session_id}
    assert f'"modelId":"{MODEL}"' in text.replace(" ", "") or f'"model":"{MODEL}"' in text
    assert MARKER in text  # the lead prompt travelled by --append-system-prompt-file
    assert KICKOFF in text

    # A reused id is refused by claude: why okstra mints a fresh one per launch.
    again = _run(plan.argv, {**env, **plan.env}, project)
    assert "already in use" in again.stdout + again.stderr


def test_resume_argv_is_accepted(tmp_path: Path) -> None:
    env, project, _ = _setup(tmp_path)
    plan = _plan(env, project)
    _run(plan.argv, env, project)
    resume = plan.resume_argv()
    assert resume is not None and MODEL in resume  # the model is passed on resume too
    done = _run(resume, env, tmp_path)  # --resume works from another directory
    assert not done.stderr.startswith("error:"), done.stderr
    said = done.stdout + done.stderr
    assert "No conversation found" not in said
    # Without a TTY claude runs headless: the pinned version either stops at the login
    # check or, having found the session, says there is nothing to continue without a
    # prompt. Both mean: argv parsed, our session found.
    assert done.returncode == 1
    assert "Not logged in" in said or "in the resumed session" in said, said
    # Control: the same argv with an id claude never saw is told apart.
    unknown = [
        a if a != plan.session_id else "0b6e1c2a-1111-4222-8333-444455556666" for a in resume
    ]
    missing = _run(unknown, env, tmp_path)
    assert "No conversation found" in missing.stdout + missing.stderr


def test_negative_control_rejected_argv(tmp_path: Path) -> None:
    env, project, config = _setup(tmp_path)
    plan = _plan(env, project)
    bad = [plan.argv[0], "--bogus-flag", *plan.argv[1:]]
    done = _run(bad, env, project)
    assert done.returncode == 1
    assert done.stderr.startswith("error:") and "--bogus-flag" in done.stderr
    assert not config.exists()
