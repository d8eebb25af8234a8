"""Third compatibility round: the earlier okstra's argv replays — `renderArgs` flattened
the earlier way (`--stage N`, the earlier key names) is accepted by prepare, and its
`project-id` is the project file's id."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from compat2_support import make_project, okstra, prepare_line

PLAN = """---
approved: true
---
# Checkout fix

## Stage 1: schema
Change the schema.

## Stage 2: wording
Copy edits.
"""


@pytest.fixture
def project(tmp_path: Path, fake_path: Path) -> Path:
    root = make_project(tmp_path / "shop")
    (root / "docs" / "plan.md").write_text(PLAN, encoding="utf-8")
    return root


def _flattened(args: dict[str, object]) -> list[str]:
    """`renderArgs` as the earlier okstra's scripts flattened it: `--key value`."""
    argv: list[str] = []
    for key, value in args.items():
        for item in value if isinstance(value, list) else [value]:
            argv += [f"--{key}", str(item)]
    return argv


def test_render_args_flattened_the_earlier_way_prepare(project: Path, tmp_path: Path) -> None:
    state = tmp_path / "w.json"
    created, code, _ = okstra(
        "wizard", "init", "--project-root", str(project), "--state", str(state),
        "--task-type", "implementation", "--host", "terminal",
    )  # fmt: skip
    assert code == 0, created
    for _ in range(40):
        shown, code, _ = okstra("wizard", "show", "--state", str(state))
        prompt = shown["prompt"]
        if prompt["kind"] == "done":
            break
        answer = {
            "task_group": "checkout", "task_id": "chk-2", "brief": "docs/brief.md",
            "approved_plan": "docs/plan.md",
        }.get(prompt["id"]) or prompt.get("default") or "x"  # fmt: skip
        stepped, code, _ = okstra(
            "wizard", "step", "--state", str(state), "--answer", answer, "--step", prompt["id"]
        )
        assert code == 0 and stepped["ok"], stepped
    outcome, code, _ = okstra("wizard", "outcome", "--state", str(state))
    assert code == 0, outcome
    args = outcome["renderArgs"]
    assert args["stage"] == "1" and args["stages"] == "1,2", args
    prepared, code, stderr = okstra("prepare", *_flattened(args), "--launch", "none", "--dry-run")
    assert code == 0, prepared
    assert "--stage 1 is deprecated" in stderr, stderr


def test_project_id_is_the_project_files_own(project: Path) -> None:
    config = project / ".okstra" / "project.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"project_id": "shop-4f2a"}), encoding="utf-8")
    line = [a for a in prepare_line(project, "--host", "terminal") if a != "--dry-run"]
    payload, code, _ = okstra(*line)
    assert code == 0, payload
    manifest = json.loads((Path(payload["runDir"]) / "run-manifest.json").read_text())
    assert manifest["projectId"] == "shop-4f2a", manifest
    # The project file keeps the id, under okstra's key.
    assert json.loads(config.read_text())["projectId"] == "shop-4f2a"
