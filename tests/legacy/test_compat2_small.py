"""Second compatibility round, smaller items: the approval gate of a plan's
clarification table, and `OKSTRA_RUN_SEQ_OVERRIDE`."""

from __future__ import annotations

from pathlib import Path

import pytest
from compat2_support import make_project, okstra, prepare_line, snapshot

PLAN = """---
approved: true
---
# Checkout fix

## 1. Clarification Items

| ID  | Question                  | Blocks        | Status   |
|-----|---------------------------|---------------|----------|
| Q-1 | Which currency rounding?  | stage 2       | open     |
| Q-2 | May the API change?       | approval      | {status} |

## Stage 1: schema
Change the schema.

## Stage 2: wording
Copy edits.
"""


@pytest.fixture
def project(tmp_path: Path, fake_path: Path) -> Path:
    return make_project(tmp_path / "shop")


def _plan(project: Path, status: str) -> Path:
    path = project / "docs" / "plan.md"
    path.write_text(PLAN.format(status=status), encoding="utf-8")
    return path


@pytest.mark.parametrize("status", ["open", "answered", "Open"])
def test_an_open_approval_row_refuses_the_plan(project: Path, status: str) -> None:
    plan = _plan(project, status)
    before = snapshot(plan)
    line = prepare_line(project, "--approved-plan", "docs/plan.md", task_type="implementation")
    payload, code, _ = okstra(*line)
    assert code == 2, payload
    assert (
        "clarification item Q-2 (row 2 of Clarification Items) blocks approval"
        in (payload["error"])
    )
    assert str(plan) in payload["error"] or payload.get("path") == str(plan), payload
    assert payload.get("field") == "Clarification Items[2]", payload
    assert snapshot(plan) == before
    assert not (project / ".okstra" / "tasks").exists()


@pytest.mark.parametrize("status", ["resolved", "closed", "dropped"])
def test_a_resolved_approval_row_lets_the_plan_through(project: Path, status: str) -> None:
    _plan(project, status)
    line = prepare_line(project, "--approved-plan", "docs/plan.md", task_type="implementation")
    payload, code, _ = okstra(*line)
    assert code == 0, payload


def test_the_wizard_refuses_the_plan_at_its_step(project: Path, tmp_path: Path) -> None:
    _plan(project, "open")
    state = tmp_path / "w.json"
    created, code, _ = okstra(
        "wizard",
        "init",
        "--project-root",
        str(project),
        "--state",
        str(state),
        "--task-type",
        "implementation",
    )
    assert code == 0, created
    for answer in ("new", "checkout", "chk-1", "docs/brief.md"):
        moved, code, _ = okstra("wizard", "step", "--state", str(state), "--answer", answer)
        assert code == 0 and moved["ok"], moved
    assert moved["next"]["id"] == "approved_plan"
    moved, code, _ = okstra("wizard", "step", "--state", str(state), "--answer", "docs/plan.md")
    assert code == 0 and moved["ok"] is False
    assert "Q-2" in moved["error"] and "blocks approval" in moved["error"]


def _real(project: Path, **env: str) -> tuple[dict[str, object], int]:
    from legacy_support import FAKE_HELP

    line = [a for a in prepare_line(project) if a != "--dry-run"]
    payload, code, _ = okstra(*line, env={"FAKE_CLI_HELP": FAKE_HELP, **env})
    return payload, code


def test_run_seq_override_names_the_run(project: Path) -> None:
    dry, code, _ = okstra(*prepare_line(project), env={"OKSTRA_RUN_SEQ_OVERRIDE": "7"})
    assert code == 0 and dry["runId"] == "error-analysis-007", dry
    payload, code = _real(project, OKSTRA_RUN_SEQ_OVERRIDE="7")
    assert code == 0 and payload["runId"] == "error-analysis-007", payload
    runs = project / ".okstra" / "tasks" / "checkout" / "chk-1" / "runs"
    assert (runs / "error-analysis-007" / "run-manifest.json").is_file()
    again, code = _real(project, OKSTRA_RUN_SEQ_OVERRIDE="7")
    assert code == 2 and "error-analysis-007 already exists" in str(again["error"]), again
    # A number reserved in advance (an empty directory) is taken.
    (runs / "error-analysis-009").mkdir()
    payload, code = _real(project, OKSTRA_RUN_SEQ_OVERRIDE="9")
    assert code == 0 and payload["runId"] == "error-analysis-009", payload
    # Without the variable the next number follows the highest.
    payload, code = _real(project)
    assert code == 0 and payload["runId"] == "error-analysis-010", payload


@pytest.mark.parametrize("value", ["x", "0", "-3", "1.5"])
def test_a_bad_run_seq_override_is_refused(project: Path, value: str) -> None:
    payload, code = _real(project, OKSTRA_RUN_SEQ_OVERRIDE=value)
    assert code == 2, payload
    assert payload.get("field") == "OKSTRA_RUN_SEQ_OVERRIDE"
    assert not (project / ".okstra" / "tasks").exists()
