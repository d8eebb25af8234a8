"""Approved plans as the earlier okstra wrote and accepted them: undeclared stages,
dash variants, `conformanceTests` in data.json, and the wizard's approval check."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from okstra_core.errors import DataFileError, PrepareError
from okstra_core.plans import check_approved_plan, check_plan_approval

TASK_REL = ".okstra/tasks/g/t"
FRONT = "---\napproved: true\n---\n"


def _tests_line(n: int, dash: str = "—", requires: str = "db") -> str:
    script = f"{TASK_REL}/qa/scripts/stage-{n}.sh"
    return f"Conformance tests: stage-{n} {dash} {script} (requires=[{requires}])"


def _plan(root: Path, body: str, front: str = FRONT) -> Path:
    path = root / "plan.md"
    path.write_text(front + body, encoding="utf-8")
    return path


def _check(root: Path, plan: Path) -> Any:
    return check_approved_plan(str(plan), project_root=root, task_root=root / TASK_REL)


def test_stage_without_a_declaration_is_left_alone(tmp_path: Path) -> None:
    body = (
        f"## Stage 1: schema\n{_tests_line(1)}\n"
        "## Stage 2: wording\nJust copy edits; nothing to test.\n"
        "## Stage 3: docs\nConformance exemption: docs only\n"
    )
    plan = _check(tmp_path, _plan(tmp_path, body))
    assert [s.stage for s in plan.stages] == [1, 3]
    assert plan.undeclared == (2,)


@pytest.mark.parametrize("dash", ["—", "–", "--", "-"])
def test_dash_variants_are_accepted(tmp_path: Path, dash: str) -> None:
    plan = _check(tmp_path, _plan(tmp_path, f"## Stage 1\n{_tests_line(1, dash)}\n"))
    assert plan.stages[0].script == f"{TASK_REL}/qa/scripts/stage-1.sh"


def test_other_separators_are_refused_with_the_accepted_ones_named(tmp_path: Path) -> None:
    with pytest.raises(PrepareError) as info:
        _check(tmp_path, _plan(tmp_path, f"## Stage 1\n{_tests_line(1, ':')}\n"))
    text = info.value.render()
    assert "stage 1:" in text and "`–`, `--` or `-`" in text


def _with_data(root: Path, data: Any, body: str | None = None) -> Path:
    plan = _plan(root, body or f"## Stage 1\n{_tests_line(1)}\n## Stage 2\n{_tests_line(2)}\n")
    (root / "data.json").write_bytes(orjson.dumps(data))
    return plan


def test_per_stage_conformance_tests_are_read(tmp_path: Path) -> None:
    good = {
        "approved": True,
        "stages": [
            {"stage": 1, "conformanceTests": _tests_line(1, "-")},
            {"stage": 2, "conformanceTests": "Conformance exemption: generated code"},
        ],
    }
    assert _check(tmp_path, _with_data(tmp_path, good)).data_json == tmp_path / "data.json"
    bad = {"stages": [{"stage": 1}, {"stage": 2, "conformanceTests": "Conformance tests: later"}]}
    with pytest.raises(PrepareError) as info:
        _check(tmp_path, _with_data(tmp_path, bad))
    assert info.value.path == str(tmp_path / "data.json")
    assert info.value.field == "stages[1].conformanceTests"
    assert "Conformance tests: stage-<N> —" in info.value.render()
    wrong_type = {"stages": [{"stage": 1, "conformanceTests": ["x"]}, {"stage": 2}]}
    with pytest.raises(
        PrepareError, match=r"stages\[0\]\.conformanceTests.*expected a declaration"
    ):
        _check(tmp_path, _with_data(tmp_path, wrong_type))


def test_top_level_conformance_tests_are_read(tmp_path: Path) -> None:
    objects = {"conformanceTests": [{"stage": 2, "declaration": _tests_line(2, "–")}]}
    _check(tmp_path, _with_data(tmp_path, objects))
    strings = {"conformanceTests": [_tests_line(1), _tests_line(2, "--", "io,http")]}
    _check(tmp_path, _with_data(tmp_path, strings))


@pytest.mark.parametrize(
    ("tests", "field", "says"),
    [
        ([{"stage": "2", "declaration": "x"}], "conformanceTests[0].stage", "stage number"),
        ([{"stage": 2}], "conformanceTests[0].declaration", "expected a string"),
        (["Conformance exemption: no stage"], "conformanceTests[0]", "must name its stage"),
        ([_tests_line(1), _tests_line(9)], "conformanceTests[1]", "not a stage of the plan"),
        ([7], "conformanceTests[0]", "an object or a string"),
        (
            [f"Conformance tests: stage-2 — {TASK_REL}/qa/scripts/stage-2.sh (requires=[gpu])"],
            "conformanceTests[0]",
            "gpu",
        ),
    ],
)
def test_malformed_top_level_conformance_tests_name_file_and_field(
    tmp_path: Path, tests: list[Any], field: str, says: str
) -> None:
    with pytest.raises(PrepareError) as info:
        _check(tmp_path, _with_data(tmp_path, {"conformanceTests": tests}))
    assert info.value.path == str(tmp_path / "data.json")
    assert info.value.field == field
    assert says in info.value.render()


def test_conformance_tests_that_is_no_array_is_a_data_file_error(tmp_path: Path) -> None:
    with pytest.raises(DataFileError) as info:
        _check(tmp_path, _with_data(tmp_path, {"conformanceTests": "stage-1"}))
    assert info.value.field == "conformanceTests"
    assert info.value.path == str(tmp_path / "data.json")


def test_plan_and_data_json_problems_are_listed_together(tmp_path: Path) -> None:
    body = f"## Stage 1\nConformance tests: soon\n## Stage 2\n{_tests_line(2)}\n"
    plan = _with_data(tmp_path, {"conformanceTests": [{"stage": 2, "declaration": "no"}]}, body)
    with pytest.raises(PrepareError) as info:
        _check(tmp_path, plan)
    text = info.value.render()
    assert "stage 1:" in text and "conformanceTests[0]" in text
    assert info.value.path == str(plan)


def test_approval_check_alone(tmp_path: Path) -> None:
    plan = _plan(tmp_path, "# no stages needed for the approval check\n")
    assert check_plan_approval("plan.md", project_root=tmp_path) == plan
    _plan(tmp_path, "", front="---\napproved: false\n---\n")
    with pytest.raises(PrepareError, match="not approved") as info:
        check_plan_approval("plan.md", project_root=tmp_path)
    assert info.value.field == "approved"
    # Said as the front matter spells it, not as Python does.
    assert "`approved` is false, expected true" in info.value.message
    _plan(tmp_path, "", front="---\ntitle: x\n---\n")
    with pytest.raises(PrepareError, match="`approved` is missing, expected true"):
        check_plan_approval("plan.md", project_root=tmp_path)
    _plan(tmp_path, "")
    (tmp_path / "data.json").write_bytes(orjson.dumps({"approved": False}))
    with pytest.raises(PrepareError, match="disagrees") as info:
        check_plan_approval("plan.md", project_root=tmp_path)
    assert info.value.path == str(tmp_path / "data.json")


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
def test_wizard_approved_plan_step_refuses_an_unapproved_plan(tmp_path: Path) -> None:
    project = tmp_path / "shop"
    (project / "docs").mkdir(parents=True)
    (project / "docs" / "brief.md").write_text("# brief\n")
    plan = project / "plan.md"
    plan.write_text("---\napproved: false\n---\n## Stage 1\nConformance exemption: x\n")
    state = str(tmp_path / "w.json")
    _okstra(
        "wizard",
        "init",
        "--state",
        state,
        "--project-root",
        str(project),
        "--task-type",
        "implementation",
    )
    for answer in ("new", "checkout", "chk-114", "docs/brief.md"):
        assert _okstra("wizard", "step", "--state", state, "--answer", answer)["ok"]
    before = Path(state).read_bytes()
    refused = _okstra("wizard", "step", "--state", state, "--answer", "plan.md")
    assert refused["ok"] is False and refused["current"]["id"] == "approved_plan"
    assert str(plan) in refused["error"] and "approved" in refused["error"]
    assert "expected true" in refused["error"]
    assert Path(state).read_bytes() == before

    plan.write_text("---\napproved: true\n---\n## Stage 1\nConformance exemption: x\n")
    accepted = _okstra("wizard", "step", "--state", state, "--answer", "plan.md")
    assert accepted["ok"] is True and accepted["next"]["id"] != "approved_plan"
