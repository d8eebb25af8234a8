"""Hints offer only what can work for a run; `okstra resume` prints for people."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from life_support import base_env, make_fake_clis, okstra, okstra_json, prepare_args

from okstra_core.life.runinfo import RunInfo
from okstra_core.life.status import LeadStatus, next_steps

RUN_DIR = Path("/p/.okstra/tasks/perf/widget/runs/requirements-discovery-001")
ATTACH = f"okstra attach {RUN_DIR}"
EXEC = f"okstra resume {RUN_DIR} --exec"
LOOKUP = f"okstra resume {RUN_DIR}"


def run(minted: str | None = "3f0c8a9e-2b1d-4c5e-9f7a-1b2c3d4e5f60") -> RunInfo:
    return RunInfo(
        run_dir=RUN_DIR,
        manifest_path=RUN_DIR / "run-manifest.json",
        run_id=RUN_DIR.name,
        task_key="perf/widget",
        task_type="requirements-discovery",
        project_root=Path("/p"),
        created_at=None,
        team_size=1,
        entry_mode="spawn-process",
        leader={},
        minted_session_id=minted,
    )


TMUX = {"backend": "tmux", "pane_ref": "%3", "window_ref": "perf-widget:0"}


@pytest.mark.parametrize(
    ("lead", "minted", "expected"),
    [
        # Never launched, the id prepare minted: resume; no window to attach to.
        (LeadStatus(state="prepared"), "3f0c8a9e-2b1d-4c5e-9f7a-1b2c3d4e5f60", [EXEC]),
        # A CLI that mints its own id, never launched: look the id up first.
        (LeadStatus(state="prepared"), None, [LOOKUP]),
        # Running in tmux: attach; resume --exec is refused while it runs.
        (LeadStatus(state="running", session_id="s-1", **TMUX), None, [ATTACH]),
        # Running in tmux, its id still pending: attach, and look the id up.
        (LeadStatus(state="running", pending_id=True, **TMUX), None, [ATTACH, LOOKUP]),
        # Ended in tmux: the window is no longer the lead's; resume.
        (LeadStatus(state="exited", exit_status=1, session_id="s-1", **TMUX), None, [EXEC]),
        # A foreground lead that ended without a known id.
        (LeadStatus(state="exited", backend="exec"), None, [LOOKUP]),
        # Running in the foreground: nothing to attach to, nothing to resume yet.
        (LeadStatus(state="running", backend="exec", session_id="s-1"), None, []),
        # The host session is the lead; a launch that failed; a refused or damaged lead.
        (LeadStatus(state="host-session", session_id="s-1"), None, []),
        (LeadStatus(state="launch-failed", backend="tmux"), "3f0c8a9e-2b1d", []),
        (LeadStatus(state="refused", session_id="s-1", **TMUX), None, []),
        (LeadStatus(state="damaged", backend="exec"), None, []),
    ],
)
def test_only_actions_that_can_work(lead: LeadStatus, minted: str | None, expected: list) -> None:
    assert list(next_steps(run(minted), lead)) == expected


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Any]:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "brief.md").write_text("Speed up the widget.\n", encoding="utf-8")
    env = base_env(make_fake_clis(tmp_path / "bin"), tmp_path)
    code, doc = okstra_json(prepare_args(project, "none"), cwd=project, env=env)
    assert code == 0, doc
    return {"project": project, "env": env, "run_dir": Path(doc["runDir"])}


def test_resume_prints_for_people_and_json_on_request(world: dict[str, Any]) -> None:
    run_dir = world["run_dir"]
    proc = okstra(["resume", "perf/widget", "--wait", "0"], cwd=world["project"], env=world["env"])
    text = proc.stdout.decode()
    assert proc.returncode == 0 and not text.lstrip().startswith("{"), text
    assert f"run      perf/widget/{run_dir.name}" in text
    assert "lead     claude · claude-opus-4-6 · session " in text and "(ready)" in text
    assert f"resume   okstra resume {run_dir} --exec" in text
    proc = okstra(
        ["resume", "perf/widget", "--wait", "0", "--json"], cwd=world["project"], env=world["env"]
    )
    doc = orjson.loads(proc.stdout)
    assert doc["ok"] is True and doc["participants"][0]["role"] == "leader"
    assert doc["nextSteps"] == [f"okstra resume {run_dir} --exec"]
    # An error, printed for people, goes to stderr as text.
    proc = okstra(["resume", "perf/nope", "--wait", "0"], cwd=world["project"], env=world["env"])
    assert proc.returncode == 2 and proc.stdout == b"" and b"okstra: " in proc.stderr


def test_status_offers_only_what_can_work(world: dict[str, Any]) -> None:
    proc = okstra(["status", "perf/widget"], cwd=world["project"], env=world["env"])
    text = proc.stdout.decode()
    assert f"resume   okstra resume {world['run_dir']} --exec" in text
    assert "attach" not in text  # never launched: no window
