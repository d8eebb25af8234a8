"""The lead's activity in real tmux (a private server): the real claude's empty input
line (`❯`, a no-break space, a space) reads `waiting for input`, and `okstra status
--wait waiting` returns on it."""

from __future__ import annotations

import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from life_support import base_env, make_fake_clis, okstra_json, prepare_args, set_lead

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

SCREENS = Path(__file__).parent / "screens"


@pytest.fixture
def world(tmp_path: Path) -> Iterator[dict[str, Any]]:
    socket = f"okstra-act-{uuid.uuid4().hex[:12]}"
    project = tmp_path / "proj"
    project.mkdir()
    (project / "brief.md").write_text("Speed up the widget.\n", encoding="utf-8")
    bin_dir = make_fake_clis(tmp_path / "bin")
    env = base_env(bin_dir, tmp_path, OKSTRA_TMUX_SOCKET=socket)
    yield {"socket": socket, "project": project, "env": env, "spec": tmp_path / "lead.json"}
    subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True, check=False)


def test_the_real_claude_prompt_reads_waiting(world: dict[str, Any]) -> None:
    # The fake lead (claude) draws the bottom of the real claude's empty screen, byte
    # for byte, and stays.
    screen = (SCREENS / "claude-empty.txt").read_text(encoding="utf-8").splitlines()
    bottom = [line for line in screen if line.strip()][-4:]
    assert bottom[1] == "❯\u00a0 "
    set_lead(world["spec"], show=bottom, delay=60)
    code, doc = okstra_json(
        prepare_args(world["project"], "tmux"), cwd=world["project"], env=world["env"]
    )
    assert code == 0, doc
    code, seen = okstra_json(
        ["status", doc["runId"], "--wait", "waiting", "--timeout", "30", "--json"],
        cwd=world["project"],
        env=world["env"],
    )
    assert code == 0 and seen["activity"] == "waiting for input", seen
    code, listed = okstra_json(["runs", "--json"], cwd=world["project"], env=world["env"])
    assert code == 0 and listed["runs"][0]["activity"] == "waiting for input", listed
    # Not idle yet (300 s): waiting for idle gives up at the timeout.
    code, seen = okstra_json(
        ["status", doc["runId"], "--wait", "idle", "--timeout", "0.2", "--json"],
        cwd=world["project"],
        env=world["env"],
    )
    assert code == 124 and seen["activity"] == "waiting for input", seen
    code, stopped = okstra_json(
        ["stop", doc["runId"], "--grace", "1", "--json"], cwd=world["project"], env=world["env"]
    )
    assert code == 0, stopped
