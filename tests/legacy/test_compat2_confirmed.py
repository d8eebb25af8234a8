"""Second compatibility round: a file the earlier okstra saved confirmed is confirmed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from compat2_support import make_project, okstra, snapshot
from legacy_support import FAKE_HELP


def _v1(project: Path, **extra: Any) -> dict[str, Any]:
    state: dict[str, Any] = {
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
        "critic": "",
        "critic_pending_text": False,
        "reuse_previous": None,
        "use_defaults": True,
        "workers_override": "",
        "workers_custom_pending": False,
        "profile_workers": ["claude", "codex", "report-writer"],
        "lead_provider": "",
        "lead_model": "",
        "claude_model": "",
        "codex_model": "",
        "report_writer_provider": "",
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
            "directive_pick",
            "confirm",
        ],
        "confirmed": True,
        "aborted": False,
        "edit_target": "",
    }
    state.update(extra)
    return state


def _earlier_v2(project: Path) -> dict[str, Any]:
    state = _v1(project)
    for name in ("executor", "critic", "lead_provider", "lead_model", "claude_model"):
        state.pop(name)
    for name in ("codex_model", "report_writer_provider", "report_writer_model"):
        state.pop(name)
    state.pop("workers_override")
    state.update(
        {
            "executionIdentityVersion": 2,
            "roleCounts": {"analyser": 2},
            "roleModels": {"analyser": ["claude/opus-4.6", "codex/gpt-5.6-sol"]},
            "roleSelectionOrder": ["role-count:analyser"],
            "answered": [*state["answered"][:5], "role-count:analyser", "confirm"],
        }
    )
    return state


@pytest.fixture
def project(tmp_path: Path, fake_path: Path) -> Path:
    return make_project(tmp_path / "shop")


@pytest.mark.parametrize("shape", ["v1", "earlier-v2"])
def test_confirmed_earlier_file_has_an_outcome_and_prepares(
    shape: str, project: Path, tmp_path: Path
) -> None:
    source = tmp_path / "wizards" / f"{shape}.json"
    source.parent.mkdir()
    data = _v1(project) if shape == "v1" else _earlier_v2(project)
    source.write_text(json.dumps(data, indent=2))
    before = snapshot(source)
    outcome, code, _ = okstra("wizard", "outcome", "--state", str(source))
    assert code == 0, outcome
    assert any(a.startswith("--role-count=") for a in outcome["renderArgv"])
    shown, code, _ = okstra("wizard", "show", "--state", str(source))
    assert code == 0, shown
    assert shown["prompt"]["kind"] == "done"
    confirm = [h for h in shown["history"] if h["stepId"] == "confirm"]
    assert confirm and confirm[0]["provenance"].startswith("converted:")
    prepared, code, stderr = okstra(
        "prepare", "--state", str(source), "--launch", "none", "--dry-run"
    )
    assert code == 0, (prepared, stderr)
    prepared, code, stderr = okstra(
        "prepare", "--state", str(source), "--launch", "none", env={"FAKE_CLI_HELP": FAKE_HELP}
    )
    assert code == 0, (prepared, stderr)
    assert prepared["runId"] == "requirements-discovery-001"
    assert snapshot(source) == before
    assert not list(source.parent.glob("*.lock"))


def test_confirmed_file_with_a_step_to_ask_again_is_not_confirmed(
    project: Path, tmp_path: Path
) -> None:
    source = tmp_path / "wizards" / "stale.json"
    source.parent.mkdir()
    # The lead's model is unknown here: it is asked again.
    data = _v1(project, lead_provider="claude", lead_model="nope-9")
    source.write_text(json.dumps(data))
    before = snapshot(source)
    outcome, code, _ = okstra("wizard", "outcome", "--state", str(source))
    assert code == 2, outcome
    shown, code, _ = okstra("wizard", "show", "--state", str(source))
    assert code == 0
    assert shown["prompt"]["kind"] != "done"
    assert any("saved confirmed" in n for n in shown["notes"])
    assert snapshot(source) == before


def test_no_lock_sidecar_beside_a_legacy_companion(project: Path, tmp_path: Path) -> None:
    source = tmp_path / "wizards" / "open.json"
    source.parent.mkdir()
    data = _v1(project, confirmed=False, answered=["task_pick", "task_group", "task_id"])
    source.write_text(json.dumps(data))
    before = snapshot(source)
    moved, code, _ = okstra("wizard", "step", "--state", str(source), "--no-submit")
    assert code == 0, moved
    moved, code, _ = okstra("wizard", "step", "--state", str(source), "--answer", "docs/brief.md")
    assert code == 0 and moved["ok"], moved
    names = sorted(p.name for p in source.parent.iterdir())
    assert len(names) == 2 and names[0] == "open.json", names
    assert names[1].startswith("open.json.v2.") or names[1].startswith("open.v2."), names
    assert snapshot(source) == before


def test_render_args_carry_the_earlier_keys(project: Path, tmp_path: Path) -> None:
    source = tmp_path / "wizards" / "keys.json"
    source.parent.mkdir()
    source.write_text(json.dumps(_v1(project)))
    outcome, code, _ = okstra("wizard", "outcome", "--state", str(source))
    assert code == 0, outcome
    args = outcome["renderArgs"]
    assert args["task-brief"] == args["brief"] == str(project / "docs" / "brief.md")
    assert args["project-id"] == "shop"
    assert args["lead-runtime"] == args["host"] == "terminal"
    for key in ("stage", "stages", "base-ref"):
        assert key not in args  # no value here: no approved plan, no base ref
    for new in ("project-root", "task-group", "task-id", "task-type", "role-model"):
        assert new in args
    argv = outcome["renderArgv"]
    assert not any(a.startswith(("--task-brief", "--project-id", "--lead-runtime")) for a in argv)
    prepared, code, _ = okstra("prepare", *argv, "--launch", "none", "--dry-run")
    assert code == 0, prepared


def test_a_v1_file_of_a_codex_host_leads_with_codex(project: Path, tmp_path: Path) -> None:
    source = tmp_path / "wizards" / "codex.json"
    source.parent.mkdir()
    source.write_text(json.dumps(_v1(project, host_runtime="codex")))
    before = snapshot(source)
    outcome, code, _ = okstra("wizard", "outcome", "--state", str(source))
    assert code == 0, outcome
    models = outcome["request"]["roleModels"]
    assert models["leader"][0].startswith("codex/"), models
    # An empty report-writer provider converts to claude, as the earlier okstra did.
    assert models["report-writer"][0].startswith("claude/"), models
    assert snapshot(source) == before
