"""The lead's access (`prepare --lead-access`) against the real `claude` and `codex`
parsers, offline: the bundled `[launch.lead_access]` arguments, right after the program,
are accepted on launch (and claude's on resume).

Accepted looks like (measured on claude 2.1.332 and codex 0.171, not logged in, no
terminal): claude exits 1 with "Not logged in" on stdout and nothing starting `error:`;
codex gets past its parser to loading its configuration or its terminal (never exit 2
`error: unexpected argument`, its parser's refusal — the negative control).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from realcli_helpers import KICKOFF, base_env, bundled, lead_prompt, require_cli

from okstra_core.environment import Environment
from okstra_core.launch import plan_launch
from okstra_core.launch.plan import LaunchPlan, lead_access_argv

pytestmark = pytest.mark.realcli


def _run(argv: tuple[str, ...], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(argv), env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True,
        text=True, timeout=60, check=False,
    )  # fmt: skip


def _plan(provider_id: str, model: str, access: str, env: dict[str, str], root: Path) -> LaunchPlan:
    provider = bundled(provider_id)
    return plan_launch(
        provider,
        model=model,
        prompt_file=lead_prompt(root.parent),
        kickoff=KICKOFF,
        project_root=root,
        environment=Environment(env=env),
        access=lead_access_argv(provider, access),
    )


@pytest.mark.parametrize("access", ["edits", "full"])
def test_claude_accepts_the_lead_access(tmp_path: Path, access: str) -> None:
    require_cli("claude")
    project = tmp_path / "project"
    project.mkdir()
    env = {**base_env(tmp_path / "home"), "CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}
    plan = _plan("claude", "claude-opus-4-6", access, env, project)
    assert plan.argv[1:3] == ("--permission-mode", "acceptEdits")
    assert (access == "full") == (plan.argv[3:5] == ("--allowedTools", "Bash"))
    done = _run(plan.argv, env, project)
    assert not done.stderr.startswith("error:"), done.stderr
    assert done.returncode == 1 and "Not logged in" in done.stdout, (done.stdout, done.stderr)
    resume = plan.resume_argv()
    assert resume is not None and resume[1:3] == ("--permission-mode", "acceptEdits")
    if access == "full":  # the resume argv parses alike (once: each run costs seconds)
        again = _run(resume, env, project)
        assert not again.stderr.startswith("error:"), again.stderr


@pytest.mark.parametrize("access", ["edits", "full", "bogus"])
def test_codex_accepts_the_lead_access(tmp_path: Path, access: str) -> None:
    require_cli("codex")
    home = tmp_path / "home"
    (home / "codex").mkdir(parents=True)
    project = tmp_path / "project"
    project.mkdir()
    env = {**base_env(home), "CODEX_HOME": str(home / "codex")}
    if access == "bogus":  # the negative control: what codex's parser refusing looks like
        plan = _plan("codex", "gpt-5.6-sol", "ask", env, project)
        argv: tuple[str, ...] = (plan.argv[0], "--bogus-flag", *plan.argv[1:])
    else:
        plan = _plan("codex", "gpt-5.6-sol", access, env, project)
        argv = plan.argv
        assert argv[1:3] == ("--sandbox", "workspace-write")
        assert (access == "full") == (argv[3:5] == ("--ask-for-approval", "never"))
    done = _run(argv, env, project)
    refused = done.returncode == 2 and "unexpected argument" in done.stderr
    assert refused == (access == "bogus"), (done.returncode, done.stderr)
