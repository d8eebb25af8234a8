"""Nothing a user types can make okstra read or write outside the project.

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

# The last: longer than a file name may be (255 bytes).
ESCAPES = ["..", "../x", "../../etc", "/etc", "/tmp/x", "a/b", "a\\b", ".", "...", "", "  ",
           "a" * 256]  # fmt: skip


def _outside(world: World) -> Path:
    """A directory next to the project, with a brief and a plan in it."""
    out = world.root / "outside"
    out.mkdir(exist_ok=True)
    (out / "brief.md").write_text("# secret brief outside\n", encoding="utf-8")
    (out / "plan.md").write_text(APPROVED_PLAN, encoding="utf-8")
    return out


def _tree(root: Path) -> dict[str, bytes]:
    # OKSTRA_HOME's `cache/` holds only what was derived from files that validated (a
    # catalog); any command may fill it, and removing it loses nothing.
    return {
        str(p): (p.read_bytes() if p.is_file() and not p.is_symlink() else b"<dir-or-link>")
        for p in sorted(root.rglob("*"))
        if ".okstra" not in p.relative_to(root).parts[:1]
        and p.relative_to(root).parts[:2] != ("home", "cache")
    }


def _at(world: World, state: Path, step: str, answers: dict[str, str]) -> None:
    """Step a new wizard (in-process, for speed) to `step`."""
    from okstra_core.session import Wizard

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


# ------------------------------------------------------------ hostile repositories
#
# A cloned repository may carry anything inside `.okstra`: links to its own source
# files, FIFOs, links to devices. okstra refuses them (exit 2, the path named), never
# writes through them, and never hangs on them.

SOURCE = {"src/app.py": b"print('the app')\n", "src/config.py": b"DEBUG = False\n"}
TASK = ".okstra/tasks/grp/tsk"


def _hostile_repo(tmp_path: Path) -> World:
    world = make_world(tmp_path)
    for rel, data in SOURCE.items():
        (world.project / rel).parent.mkdir(parents=True, exist_ok=True)
        (world.project / rel).write_bytes(data)
    return world


def _plant_link(world: World, rel: str, target: str) -> Path:
    link = world.project / rel
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)
    return link


def _source_intact(world: World) -> None:
    for rel, data in SOURCE.items():
        assert (world.project / rel).read_bytes() == data, f"{rel} was written through a link"


HOSTILE_LINKS = {
    "project-lock": (".okstra/project.json.lock", "../src/app.py"),
    "project-json": (".okstra/project.json", "../src/config.py"),
    "runs-lock": (f"{TASK}/runs.lock", "../../../../src/app.py"),
    "timeline": (f"{TASK}/timeline.jsonl", "../../../../src/config.py"),
    "timeline-lock": (f"{TASK}/timeline.jsonl.lock", "../../../../src/app.py"),
    "task-manifest": (f"{TASK}/task-manifest.json", "../../../../src/config.py"),
    "runs-dir": (f"{TASK}/runs", "../../../../src"),
    "okstra-dir": (".okstra", "src"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_LINKS))
def test_prepare_never_writes_through_links_in_okstra(tmp_path: Path, case: str) -> None:
    world = _hostile_repo(tmp_path)
    rel, target = HOSTILE_LINKS[case]
    link = _plant_link(world, rel, target)
    before = _tree(world.root)
    run = okstra(world, *prepare_argv(world.project), "--launch=none", timeout=30)
    assert_clean_failure(run, code=2)
    assert "symbolic link" in run.doc["error"] and str(link) in run.doc["error"], run.doc
    _source_intact(world)
    assert _tree(world.root) == before


def test_links_planted_after_a_first_run_are_refused_too(tmp_path: Path) -> None:
    """A task prepared once, then a pull brings links in: the next prepare is refused."""
    world = _hostile_repo(tmp_path)
    first = okstra(world, *prepare_argv(world.project), "--launch=none", timeout=30)
    assert first.code == 0, first.doc
    timeline = world.project / TASK / "timeline.jsonl"
    timeline.unlink()
    timeline.symlink_to("../../../../src/config.py")
    lock = world.project / ".okstra/project.json.lock"
    lock.unlink(missing_ok=True)
    lock.symlink_to("../src/app.py")
    run = okstra(world, *prepare_argv(world.project), "--launch=none", timeout=30)
    assert_clean_failure(run, code=2)
    _source_intact(world)
    runs = sorted(p.name for p in (world.project / TASK / "runs").iterdir())
    assert runs == [first.doc["runId"]], "a refused prepare left a run behind"


def test_dev_zero_as_project_json_is_refused_at_once(tmp_path: Path) -> None:
    world = _hostile_repo(tmp_path)
    _plant_link(world, ".okstra/project.json", "/dev/zero")
    run = okstra(world, *prepare_argv(world.project), "--launch=none", timeout=20)
    assert_clean_failure(run, code=2)
    assert "project.json" in run.doc["error"], run.doc
    # The wizard reads the project's defaults from it: refused, never read.
    state = world.wizards / "w.json"
    for argv in (
        ["wizard", "init", "--state", str(state), "--project-root", str(world.project),
         "--host", "terminal"],
        ["wizard", "show", "--state", str(state)],
        ["wizard", "list"],
    ):  # fmt: skip
        run = okstra(world, *argv, timeout=20)
        assert b"Traceback" not in run.stderr and run.code in (0, 2), (argv, run.doc)
        if run.code:
            assert_clean_failure(run, code=2)


@pytest.mark.parametrize("special", ["fifo", "dev-zero", "dangling"])
def test_special_brief_is_refused_without_hanging(tmp_path: Path, special: str) -> None:
    world = _hostile_repo(tmp_path)
    brief = world.project / "special.md"
    if special == "fifo":
        os.mkfifo(brief)
    elif special == "dev-zero":
        brief.symlink_to("/dev/zero")  # inside-the-project check happens after resolving
    else:
        brief.symlink_to("missing.md")
    run = okstra(
        world, *prepare_argv(world.project, brief="special.md"), "--launch=none", timeout=20
    )
    assert_clean_failure(run, code=2)
    assert not (world.project / ".okstra").exists()
