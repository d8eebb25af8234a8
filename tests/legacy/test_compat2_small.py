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
