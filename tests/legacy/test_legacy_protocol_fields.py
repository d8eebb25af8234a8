"""Protocol fields the earlier okstra's consumers read, through the installed `okstra`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest


def _okstra(*args: str) -> dict[str, Any]:
    exe = Path(sys.executable).parent / "okstra"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "okstra_tui"]
    done = subprocess.run(
        [*cmd, *args], capture_output=True, env=dict(os.environ), timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr.decode()
    result: dict[str, Any] = orjson.loads(done.stdout)
    return result


@pytest.mark.usefixtures("fake_path")
def test_every_prompt_carries_step_beside_id(tmp_path: Path) -> None:
    project = tmp_path / "shop"
    project.mkdir()
    state = str(tmp_path / "w.json")
    started = _okstra("wizard", "init", "--state", state, "--project-root", str(project))
    prompts = [started["next"]]
    prompts.append(_okstra("wizard", "step", "--state", state, "--answer", "new")["next"])
    prompts.append(_okstra("wizard", "step", "--state", state, "--answer", "a/b")["current"])
    prompts.append(_okstra("wizard", "show", "--state", state)["prompt"])
    for prompt in prompts:
        assert prompt["step"] == prompt["id"], prompt
    schema = _okstra("wizard", "schema")["schemas"]["prompt"]
    assert schema["properties"]["step"]["type"] == "string"
