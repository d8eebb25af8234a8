"""End to end: `okstra wizard step --state <v1 file>` resumes through the companion."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest

REPO = Path(__file__).resolve().parents[2]


def _okstra() -> list[str]:
    import sys

    exe = Path(sys.executable).parent / "okstra"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "okstra_tui"]


def _run(*args: str) -> tuple[dict[str, Any], int]:
    done = subprocess.run(
        [*_okstra(), *args], capture_output=True, env=dict(os.environ), timeout=60, check=False
    )
    assert done.stdout, done.stderr.decode()
    return orjson.loads(done.stdout), done.returncode


@pytest.fixture
def v1_state(tmp_path: Path, fake_path: Path) -> Path:
    project = tmp_path / "shop"
    (project / "docs").mkdir(parents=True)
    (project / "docs" / "brief.md").write_text("# Guest checkout\n\nFind what breaks.\n")
    state = tmp_path / "state" / "wizards" / "legacy-checkout.json"
    state.parent.mkdir(parents=True)
    v1 = {
        "workspace_root": "",
        "project_root": str(project),
        "project_id": "",
        "host_runtime": "terminal",
        "host_entry_mode": "spawn-process",
        "available_functions": [],
        "task_mode": "new",
        "task_key": "",
        "task_group": "checkout",
        "task_id": "chk-114",
        "brief_path": str(project / "docs" / "brief.md"),
        "task_type": "requirements-discovery",
        "approved_plan_path": "",
        "executor": "",
        "critic": "off",
        "critic_pending_text": False,
        "reuse_previous": None,
        "use_defaults": False,
        "workers_override": "claude,codex",
        "workers_custom_pending": False,
        "profile_workers": ["claude", "codex", "report-writer"],
        "lead_provider": "claude",
        "lead_model": "opus",
        "claude_model": "sonnet",
        "codex_model": "",
        "report_writer_provider": "claude",
        "report_writer_model": "",
        "directive": "",
        "related_tasks_raw": "",
        "answered": [
            "task_pick",
            "task_group",
            "task_id",
            "brief",
            "task_type",
            "critic_pick",
            "defaults_or_custom",
            "workers_override",
            "lead_model",
            "claude_model",
            "codex_model",
            "report_writer_model",
        ],
        "confirmed": None,
        "aborted": False,
        "edit_target": "",
        "updated_at": "2025-09-14T08:31:02+00:00",
    }
    state.write_bytes(orjson.dumps(v1, option=orjson.OPT_INDENT_2))
    return state


def test_step_on_a_v1_file_resumes_through_the_companion(v1_state: Path) -> None:
    original = v1_state.read_bytes()
    digest = hashlib.sha256(original).hexdigest()
    companion = v1_state.with_name(f"{v1_state.name}.v2.{digest}.json")

    shown, code = _run("wizard", "step", "--state", str(v1_state), "--no-submit")
    assert code == 0 and shown["ok"], shown
    # Everything the v1 file decided is answered: the next question is past the team.
    first = shown["next"]
    converted = {
        "task_pick": "new",
        "task_group": "checkout",
        "task_id": "chk-114",
        "task_type": "requirements-discovery",
        "role-count:analyser": "2",
        "role-add:critic": "0",
        "role-model:leader:1": "claude/opus-4.6",
        "role-model:analyser:1": "claude/sonnet-4.6",
        "role-model:analyser:2": "codex/gpt-5.6-sol",
        "role-model:report-writer:1": "claude/opus-4.6",
    }
    assert first["id"] not in {*converted, "brief"}

    answered = 0
    prompt = first
    while prompt["kind"] != "done" and answered < 15:
        answer = "confirm" if prompt["id"] == "confirm" else prompt["default"]
        if answer is None:  # a text step without a default (e.g. a directive)
            answer = "skip" if prompt["kind"] == "pick" else "n/a"
        result, code = _run("wizard", "step", "--state", str(v1_state), "--answer", answer)
        assert code == 0 and result["ok"], result
        answered += 1
        prompt = result["next"]
        # Progress lives in the companion; the v1 file is never touched.
        assert v1_state.read_bytes() == original
        saved = orjson.loads(companion.read_bytes())
        assert saved["legacySource"] == {"path": str(v1_state.resolve()), "sha256": digest}
        assert saved["executionIdentityVersion"] == 2
    assert prompt["kind"] == "done"
    entries = {e["step"]: e for e in orjson.loads(companion.read_bytes())["answered"]}
    for step, answer in converted.items():
        assert (entries[step]["answer"], entries[step]["provenance"]) == (answer, "converted:v1")

    outcome, code = _run("wizard", "outcome", "--state", str(v1_state))
    assert code == 0 and outcome["ok"], outcome
    argv = outcome["renderArgv"]
    assert "--role-model=analyser=claude/sonnet-4.6" in argv
    assert "--role-model=leader=claude/opus-4.6" in argv
    assert "converted:v1" in orjson.dumps(outcome["provenance"]).decode()

    assert v1_state.read_bytes() == original
    companions = sorted(p.name for p in v1_state.parent.glob(f"{v1_state.name}.v2.*.json"))
    assert companions == [companion.name]
