"""Nothing a user types can make okstra read or write outside the project (SPEC §6.1, §8).

Task groups and ids, brief and approved-plan paths — given to the wizard or to
`okstra prepare` — that try `..`, absolute paths, path separators or symlinks pointing
outside the project are refused with a clear message, and nothing is written outside
`<project>/.okstra` (a symlinked task directory included).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.reliability_support import (
    APPROVED_PLAN,
    World,
    assert_clean_failure,
    in_process,
    make_world,
    okstra,
    prepare_argv,
)

ESCAPES = ["..", "../x", "../../etc", "/etc", "/tmp/x", "a/b", "a\\b", ".", "...", "", "  "]


def _outside(world: World) -> Path:
    """A directory next to the project, with a brief and a plan in it."""
    out = world.root / "outside"
    out.mkdir(exist_ok=True)
    (out / "brief.md").write_text("# secret brief outside\n", encoding="utf-8")
    (out / "plan.md").write_text(APPROVED_PLAN, encoding="utf-8")
    return out


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p): (p.read_bytes() if p.is_file() and not p.is_symlink() else b"<dir-or-link>")
        for p in sorted(root.rglob("*"))
        if ".okstra" not in p.relative_to(root).parts[:1]
    }


def _at(world: World, state: Path, step: str, answers: dict[str, str]) -> None:
    """Step a new wizard (in-process, for speed) to `step`."""
    from okstra_core.wizard import Wizard

    wizard = Wizard.init(state, world.project, host="terminal", environment=world.environment)
    prompt = wizard.prompt()
    while prompt.id != step:
        prompt = wizard.submit(answers.get(prompt.id, prompt.default or "")).next


def _step(world: World, state: Path, value: str) -> dict[str, Any]:
    """`okstra wizard step --answer=value` through the dispatcher, in-process."""
    code, doc = in_process(world, "wizard", "step", "--state", str(state), f"--answer={value}")
    assert code == 0, doc
    return doc


@pytest.mark.parametrize("field", ["task_group", "task_id"])
def test_wizard_refuses_escaping_task_segments(tmp_path: Path, field: str) -> None:
    world = make_world(tmp_path)
    state = world.wizards / "w.json"
    _at(world, state, field, {"task_pick": "new", "task_group": "grp"})
    for value in ESCAPES:
        before = state.read_bytes()
        doc = _step(world, state, value)
        assert doc["ok"] is False, (value, doc)
        assert doc["current"]["id"] == field and doc["error"]
        assert state.read_bytes() == before, value
    # Metacharacters are slugified into one inert segment.
    run = okstra(world, "wizard", "step", "--state", str(state), "--answer", "a;$(rm -rf ~)`x`|&")
    assert run.code == 0 and run.doc["ok"], run.doc
    saved = json.loads(state.read_bytes())[field]
    assert (
        saved and "/" not in saved and set(saved) <= set("abcdefghijklmnopqrstuvwxyz0123456789._-")
    )


def test_wizard_refuses_briefs_and_plans_outside_the_project(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    outside = _outside(world)
    (world.project / "link-brief.md").symlink_to(outside / "brief.md")
    (world.project / "link-dir").symlink_to(outside)
    state = world.wizards / "w.json"
    _at(world, state, "brief", {"task_pick": "new", "task_group": "grp", "task_id": "tsk"})
    bad = [str(outside / "brief.md"), "../outside/brief.md", "link-brief.md",
           "link-dir/brief.md", "/etc/passwd", "missing.md", "."]  # fmt: skip
    for value in bad:
        before = state.read_bytes()
        doc = _step(world, state, value)
        assert doc["ok"] is False, (value, doc)
        assert state.read_bytes() == before
    assert _step(world, state, "brief.md")["ok"]
    doc = _step(world, state, "implementation")
    assert doc["ok"] and doc["next"]["id"] == "approved_plan", doc
    (world.project / "link-plan.md").symlink_to(outside / "plan.md")
    for value in [str(outside / "plan.md"), "../outside/plan.md", "link-plan.md",
                  "link-dir/plan.md"]:  # fmt: skip
        before = state.read_bytes()
        doc = _step(world, state, value)
        assert doc["ok"] is False, (value, doc)
        assert state.read_bytes() == before


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--task-group", v) for v in ("..", "../../x", "/abs", "a/b", "")]
    + [("--task-id", v) for v in ("..", "../../x", "/abs", "a/b", ".")]
    + [("--brief", v) for v in ("../outside/brief.md", "OUTSIDE", "link-brief.md", "/etc/hosts")]
    + [("--approved-plan", v) for v in ("../outside/plan.md", "OUTSIDE", "link-plan.md")],
)
def test_prepare_refuses_escaping_inputs(tmp_path: Path, flag: str, value: str) -> None:
    world = make_world(tmp_path)
    outside = _outside(world)
    (world.project / "link-brief.md").symlink_to(outside / "brief.md")
    (world.project / "link-plan.md").symlink_to(outside / "plan.md")
    value = value.replace("OUTSIDE", str(outside / ("plan.md" if "plan" in flag else "brief.md")))
    task_type = "implementation" if flag == "--approved-plan" else "requirements-discovery"
    argv = prepare_argv(world.project, task_type=task_type)
    if flag == "--approved-plan":
        argv += ["--approved-plan", value]
    else:
        i = argv.index(flag)
        argv[i + 1] = value
    before = _tree(world.root)
    run = okstra(world, *argv, "--launch=none")
    assert_clean_failure(run, code=2)
    assert _tree(world.root) == before
    assert not (world.project / ".okstra").exists(), "a refused prepare wrote into the project"


def test_symlinked_task_dir_pointing_outside_is_not_written_through(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    outside = _outside(world)
    tasks = world.project / ".okstra" / "tasks"
    tasks.mkdir(parents=True)
    (tasks / "grp").symlink_to(outside, target_is_directory=True)
    before = _tree(outside)
    run = okstra(world, *prepare_argv(world.project), "--launch", "none")
    # Either refused cleanly, or the run landed inside the project: never outside.
    assert b"Traceback" not in run.stderr
    assert _tree(outside) == before, "prepare wrote through a symlink to outside the project"
    if run.code == 0:
        assert Path(run.doc["runDir"]).resolve().is_relative_to(world.project.resolve())
    else:
        assert_clean_failure(run, code=run.code)


def test_symlinked_okstra_dir_pointing_outside_is_not_written_through(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    outside = _outside(world)
    os.symlink(outside, world.project / ".okstra")
    before = _tree(outside)
    run = okstra(world, *prepare_argv(world.project), "--launch", "none")
    assert b"Traceback" not in run.stderr
    assert _tree(outside) == before, "prepare wrote through .okstra -> outside the project"
