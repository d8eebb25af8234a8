"""Helpers of the wizard tests (imported by the test modules)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from okstra_core.environment import Environment
from okstra_core.session import Wizard
from okstra_core.wizard import Prompt
from tests.conftest import okstra_cmd

ANSWERS = {
    "task_group": "Team A",
    "task_id": "Login Bug",
    "brief": "brief.md",
    "approved_plan": "plan.md",
    "directive": "keep it small",
}


def make_task(
    project: Path,
    key: str,
    *,
    phase: str = "requirements-discovery",
    pointer: Any = None,
    brief: str | None = "brief.md",
    runs: dict[str, dict[str, Any]] | None = None,
) -> Path:
    """Write a task manifest (and prepared runs' run-inputs.json) under .okstra/tasks."""
    group, task_id = key.split("/")
    root = project / ".okstra" / "tasks" / group / task_id
    root.mkdir(parents=True, exist_ok=True)
    manifest: dict[str, Any] = {"workflow": {"currentPhase": phase}}
    if pointer is not None:
        manifest["workflow"]["nextRecommendedPhase"] = pointer
    if brief is not None:
        manifest["task"] = {"briefPath": brief}
    (root / "task-manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    for name, inputs in (runs or {}).items():
        run = root / "runs" / name
        run.mkdir(parents=True, exist_ok=True)
        # The identity prepare writes is filled in; the test's values win. A document
        # with an `inputs` object is the previous layout (filled the same way).
        identity = {
            "projectRoot": str(project.resolve()),
            "taskGroup": group,
            "taskId": task_id,
            "taskType": name.rsplit("-", 1)[0],
            "brief": "brief.md",
        }
        if isinstance(inputs.get("inputs"), dict):
            doc = {"schemaVersion": "2.0", "runId": name, **inputs}
            doc["inputs"] = {**identity, **inputs["inputs"]}
        elif "taskType" not in inputs:
            doc = {"schemaVersion": "2.0", "runId": name, **identity, **inputs}
        else:
            doc = inputs
        (run / "run-inputs.json").write_text(json.dumps(doc), encoding="utf-8")
    return root


def default_answer(prompt: Prompt) -> str:
    """The answer a person pressing Enter gives (text steps get a fixed value)."""
    if prompt.id in ANSWERS and prompt.default is None:
        return ANSWERS[prompt.id]
    assert prompt.default is not None, prompt
    return prompt.default


def run_through(wizard: Wizard, overrides: dict[str, str] | None = None, stop: str = "") -> Prompt:
    """Answer every prompt with its default (or an override) until done or `stop`."""
    overrides = overrides or {}
    prompt = wizard.prompt()
    for _ in range(60):
        if prompt.kind == "done" or prompt.id == stop:
            return prompt
        answer = overrides.get(prompt.id, default_answer(prompt))
        prompt = wizard.submit(answer).next
    raise AssertionError("the wizard did not finish in 60 steps")


def cli_env(env: Environment, **extra: str) -> dict[str, str]:
    out = dict(os.environ)
    out.update(env.env)
    out.update(extra)
    return out


def okstra(env: Environment, *args: str, check_json: bool = True, **extra: str) -> tuple[int, Any]:
    """Run the installed `okstra` command; return (exit code, parsed JSON stdout)."""
    proc = subprocess.run(
        [*okstra_cmd(), *args],
        capture_output=True,
        text=True,
        env=cli_env(env, **extra),
        timeout=60,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    data = json.loads(proc.stdout) if check_json else proc.stdout
    return proc.returncode, data
