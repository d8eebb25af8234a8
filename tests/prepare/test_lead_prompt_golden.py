"""The lead prompt, byte for byte, for a team of workers and for a host's native team.

The pinned prompts are in `tests/prepare/documents/lead-prompt-*.md`, with the project
directory written as `/project` and the run prepared at a fixed time. Every worker
gets the exact `okstra worker` commands to start, wait for and read it; a native
sub-session keeps the host's instruction. `OKSTRA_PIN_PROMPTS=1` rewrites the pinned
files (then read their diff).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import re
import shlex
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from okstra_core.environment import Environment, which
from okstra_core.prepare import prepare
from tests.conftest import okstra_cmd
from tests.prepare.prepare_support import request_of

HERE = Path(__file__).parent / "documents"
FIXED = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
PLAN = (
    "---\napproved: true\n---\n## Stage 1\nConformance tests: stage-1 — "
    ".okstra/tasks/perf/widget/qa/scripts/stage-1.sh (requires=[db])\n"
)
CASES = {
    "workers": {"task_type": "implementation", "approved_plan": "plan.md"},
    "native": {
        "host": "claude-code",
        "entry_mode": "current-session",
        "host_session_context_json": '{"currentModel": {"modelRef": "claude/opus-4.6"}}',
        "role_counts": ("analyser=2",),
    },
}


def _prompt(project: Path, env: Environment, case: str) -> str:
    """The prompt with this okstra's command directory on PATH: its commands say `okstra`."""
    (project / "plan.md").write_text(PLAN, encoding="utf-8")
    path = os.pathsep.join([str(Path(sys.executable).parent), env.env.get("PATH", "")])
    fixed = dataclasses.replace(env, env={**env.env, "PATH": path}, now=lambda: FIXED)
    result = prepare(request_of(project, **CASES[case]), launch="none", environment=fixed)
    return result.lead_prompt_path.read_text(encoding="utf-8").replace(str(project), "/project")


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_lead_prompt_is_pinned(project: Path, env: Environment, case: str) -> None:
    prompt = _prompt(project, env, case)
    pinned = HERE / f"lead-prompt-{case}.md"
    if os.environ.get("OKSTRA_PIN_PROMPTS") == "1":
        pinned.write_text(prompt, encoding="utf-8")
    assert prompt == pinned.read_text(encoding="utf-8")


def _commands(prompt: str) -> list[str]:
    """Every okstra command the prompt gives (code lines and inline code)."""
    found: list[str] = []
    fenced = False
    for line in prompt.splitlines():
        if line.strip().startswith("```"):
            fenced = line.strip() == "```sh"
        elif fenced:
            found.append(line.strip())
    found += re.findall(r"`(okstra [a-z]+ [a-z]+ [^`]+)`", prompt)
    return found


def test_the_commands_are_ones_okstra_parses(project: Path, env: Environment) -> None:
    """Every `okstra …` command of the prompt names a command and options okstra has."""
    prompt = _prompt(project, env, "workers")
    commands = _commands(prompt)
    verbs = {tuple(shlex.split(c.replace("<", "").replace(">", ""))[1:3]) for c in commands}
    assert verbs == {
        ("worker", "start"),
        ("worker", "wait"),
        ("worker", "result"),
        ("worker", "status"),
        ("worker", "stop"),
        ("worker", "send"),
        ("worker", "diff"),
        ("worker", "merge"),
        ("report", "finalize"),
        ("report", "check"),
    }, commands
    assert "in a new shell" not in prompt
    if importlib.util.find_spec("okstra_core.cli._worker") is None:
        # The worker commands come with the worker runtime; until then only the
        # report commands can be asked.
        verbs = {v for v in verbs if v[0] != "worker"}
    helps = {
        verb: subprocess.run(
            [*okstra_cmd(), *verb, "--help"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        for verb in verbs
    }
    for command in commands:
        argv = shlex.split(command.replace("<", "").replace(">", ""))
        done = helps.get((argv[1], argv[2]))
        if done is None:
            continue
        assert done.returncode == 0, (command, done.stderr)
        for option in (a for a in argv[3:] if a.startswith("--")):
            assert option in done.stdout, (command, option)


def test_a_worker_okstra_cannot_start_is_said_so(project: Path, env: Environment) -> None:
    (project / "plan.md").write_text(PLAN, encoding="utf-8")
    request = request_of(project, role_models=("analyser=grok/grok-4",))
    result = prepare(request, launch="none", environment=env)
    prompt = result.lead_prompt_path.read_text(encoding="utf-8")
    line = next(x for x in prompt.splitlines() if "(`role-exec-analyser-001`" in x)
    assert "okstra cannot start it (provider 'grok' declares no [launch] worker" in line
    assert (
        "okstra worker start perf/widget/requirements-discovery-001 role-exec-analyser-001"
        not in prompt
    )
    assert "record in the timeline that it did not run" in prompt


def test_a_lead_without_okstra_on_path_reaches_this_okstra(project: Path, env: Environment) -> None:
    """Installed as `.venv/bin/okstra`, off PATH: the prompt's commands name it in full,
    and they run in a shell whose PATH has no okstra."""
    (project / "plan.md").write_text(PLAN, encoding="utf-8")
    assert which("okstra", env.env["PATH"]) is None  # PATH only (okstra finds its own dir)
    request = request_of(project, **CASES["workers"])
    result = prepare(request, launch="none", environment=env)
    prompt = result.lead_prompt_path.read_text(encoding="utf-8")
    command = env.okstra_command()
    assert command != "okstra"
    assert f"Run okstra as `{command}`" in prompt
    (status,) = re.findall(r"`([^`]* worker status [^`]*)`", prompt)
    assert status.startswith(f"{command} worker status ")
    start = next(c for c in _commands(prompt) if " worker start " in c)
    assert start.startswith(f"{command} worker start ")
    shell_env = {"PATH": env.env["PATH"], "HOME": env.env.get("HOME", "/"), "LANG": "C.UTF-8"}
    shell_env.update({k: v for k, v in env.env.items() if k.startswith("OKSTRA_")})
    done = subprocess.run(
        ["sh", "-c", status],
        cwd=project,
        env=shell_env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "report-writer#1" in done.stdout
