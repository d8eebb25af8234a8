"""Approved-plan and brief validation."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from okstra_core.catalog.frontmatter import parse_front_matter
from okstra_core.errors import DataFileError, PrepareError
from okstra_core.plans import TESTS_FORM, check_approved_plan, check_brief, split_stages

TASK_REL = ".okstra/tasks/g/t"


def good_stage(n: int, ext: str = "sh", requires: str = "db,io") -> str:
    return (
        f"## Stage {n}: step {n}\n\nDo things.\n\n"
        f"Conformance tests: stage-{n} — {TASK_REL}/qa/scripts/stage-{n}.{ext} "
        f"(requires=[{requires}])\n\n"
    )


def write_plan(root: Path, body: str, front: str = "---\napproved: true\n---\n") -> Path:
    path = root / "plan.md"
    path.write_text(front + body, encoding="utf-8")
    return path


def check(root: Path, plan: Path):
    return check_approved_plan(str(plan), project_root=root, task_root=root / TASK_REL)


def test_good_plan_with_tests_and_exemption(tmp_path: Path) -> None:
    body = good_stage(1) + "## Stage 2: docs\n\nConformance exemption: docs only\n"
    plan = check(tmp_path, write_plan(tmp_path, body))
    assert [(s.stage, s.kind) for s in plan.stages] == [(1, "tests"), (2, "exemption")]
    assert plan.stages[0].requires == ("db", "io")
    assert plan.stages[1].reason == "docs only"


def test_toml_front_matter_and_literal_task_root(tmp_path: Path) -> None:
    body = (
        "# Plan\n### Stage 1\n- `Conformance tests: stage-1 — <task_root>/qa/scripts/"
        "stage-1.py (requires=[])`\n"
    )
    plan = check(tmp_path, write_plan(tmp_path, body, front="+++\napproved = true\n+++\n"))
    assert plan.stages[0].script == "<task_root>/qa/scripts/stage-1.py"
    assert plan.stages[0].requires == ()


def test_absolute_task_root_is_accepted(tmp_path: Path) -> None:
    root = tmp_path / TASK_REL
    body = (
        f"## Stage 1\nConformance tests: stage-1 — {root}/qa/scripts/stage-1.sh (requires=[http])\n"
    )
    assert check(tmp_path, write_plan(tmp_path, body)).stages[0].requires == ("http",)


@pytest.mark.parametrize(
    "front", ["---\napproved: false\n---\n", "---\ntitle: x\n---\n", '---\napproved: "yes"\n---\n']
)
def test_not_approved_is_refused(tmp_path: Path, front: str) -> None:
    with pytest.raises(PrepareError, match="not approved"):
        check(tmp_path, write_plan(tmp_path, good_stage(1), front=front))


def test_no_front_matter(tmp_path: Path) -> None:
    with pytest.raises(DataFileError, match="no front matter"):
        check(tmp_path, write_plan(tmp_path, good_stage(1), front=""))


def test_missing_plan(tmp_path: Path) -> None:
    with pytest.raises(PrepareError, match="not found"):
        check(tmp_path, tmp_path / "nope.md")


def test_every_malformed_stage_is_listed_at_once(tmp_path: Path) -> None:
    body = (
        good_stage(1)
        + "## Stage 2\nConformance tests: we will write tests later\n"
        + "## Stage 3\nNo declaration here.\n"
        + "## Stage 4\nConformance tests: stage-4 — elsewhere/stage-4.sh (requires=[db])\n"
        + "## Stage 5\nConformance tests: stage-5 — "
        + f"{TASK_REL}/qa/scripts/stage-5.sh (requires=[gpu])\n"
        + "## Stage 6\nConformance tests: stage-7 — "
        + f"{TASK_REL}/qa/scripts/stage-7.sh (requires=[db])\n"
        + "## Stage 7\nConformance exemption: x\nConformance exemption: y\n"
    )
    with pytest.raises(PrepareError) as info:
        check(tmp_path, write_plan(tmp_path, body))
    text = info.value.render()
    for n in (2, 4, 5, 6, 7):
        assert f"stage {n}:" in text
    # Stage 1 is well formed; stage 3 declares nothing and is left alone.
    assert "stage 1:" not in text and "stage 3:" not in text
    assert TESTS_FORM in text and "Conformance exemption: <reason>" in text
    assert "gpu" in text


def test_plan_without_stages(tmp_path: Path) -> None:
    with pytest.raises(PrepareError, match="no stages"):
        check(tmp_path, write_plan(tmp_path, "# Just prose\n"))


def test_stage_sections_end_at_same_level_heading(tmp_path: Path) -> None:
    body = "## Stage 1\n### detail\nConformance exemption: a\n## Notes\nConformance exemption: b\n"
    sections = split_stages(body)
    assert [n for n, _ in sections] == [1]
    assert sum("exemption" in ln for ln in sections[0][1]) == 1


def test_data_json_must_agree(tmp_path: Path) -> None:
    plan = write_plan(tmp_path, good_stage(1) + good_stage(2))
    data = tmp_path / "data.json"
    data.write_bytes(orjson.dumps({"approved": False}))
    with pytest.raises(PrepareError, match=r"data\.json disagrees"):
        check(tmp_path, plan)
    data.write_bytes(orjson.dumps({"approved": True, "stages": [{"stage": 1}]}))
    with pytest.raises(PrepareError, match=r"stages \[1\]"):
        check(tmp_path, plan)
    data.write_bytes(
        orjson.dumps(
            {
                "approved": True,
                "stages": [{"stage": 1}, {"stage": 2, "conformance": "Conformance tests: soon"}],
            }
        )
    )
    with pytest.raises(PrepareError, match=r"stages\[1\]\.conformance: stage 2") as info:
        check(tmp_path, plan)
    assert info.value.path == str(data) and info.value.field == "stages[1].conformance"
    data.write_bytes(orjson.dumps({"approved": True, "stages": [{"stage": 1}, {"stage": 2}]}))
    assert check(tmp_path, plan).data_json == data
    data.write_bytes(b"[1,")
    with pytest.raises(Exception, match="invalid JSON"):
        check(tmp_path, plan)


def test_yamlish_front_matter_values(tmp_path: Path) -> None:
    front, body = parse_front_matter(
        "---\napproved: true\nstages: 3\ntitle: 'Plan: A'\ntags:\n  - a\n---\nbody\n",
        tmp_path / "p.md",
    )
    assert front == {"approved": True, "stages": 3, "title": "Plan: A", "tags": ""}
    assert body == "body\n"
    with pytest.raises(DataFileError, match="never closed"):
        parse_front_matter("---\napproved: true\n", tmp_path / "p.md")
    with pytest.raises(DataFileError, match="key: value"):
        parse_front_matter("---\njust words\n---\n", tmp_path / "p.md")


def test_brief_must_exist_inside_project(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "brief.md").write_text("hi", encoding="utf-8")
    (tmp_path / "outside.md").write_text("hi", encoding="utf-8")
    assert check_brief(project, "brief.md") == (project / "brief.md").resolve()
    with pytest.raises(PrepareError, match="inside the project"):
        check_brief(project, "../outside.md")
    with pytest.raises(PrepareError, match="not found"):
        check_brief(project, "missing.md")
    with pytest.raises(PrepareError, match="directory"):
        check_brief(project, ".")
