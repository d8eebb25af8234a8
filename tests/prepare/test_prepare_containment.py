"""Prepare stays inside the project, and project.json survives prepares of other tasks."""

from __future__ import annotations

import hashlib
from pathlib import Path

import orjson
import pytest
from prepare_support import request_of

from okstra_core.environment import Environment
from okstra_core.errors import OkstraError, PrepareError
from okstra_core.plans import check_approved_plan
from okstra_core.prepare import prepare
from okstra_core.request import RunRequest
from okstra_core.tasks import resolve_inside

PLAN = (
    "---\napproved: true\n---\n## Stage 1\nConformance tests: stage-1 — "
    "<task_root>/qa/scripts/stage-1.sh (requires=[db])\n"
)


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path]:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "brief.md").write_text("# Brief\n", encoding="utf-8")
    (project / "plan.md").write_text(PLAN, encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "plan.md").write_text(PLAN, encoding="utf-8")
    (outside / "victim").write_text("keep me\n", encoding="utf-8")
    return project, outside


def inputs(project: Path, **kw: object) -> RunRequest:
    return request_of(project, **{"task_group": "grp", "task_id": "tsk", **kw})


def tree(root: Path) -> dict[str, bytes]:
    """Every path under `root` and its bytes; OKSTRA_HOME's `cache/` is left out.

    The cache holds only what okstra derived from files that validated (a catalog);
    any command may fill it, and removing it loses nothing.
    """
    out: dict[str, bytes] = {}
    for p in sorted(root.rglob("*")):
        if p.is_relative_to(root / "cache"):
            continue
        out[str(p)] = b"<link>" if p.is_symlink() else p.read_bytes() if p.is_file() else b"<dir>"
    return out


# ------------------------------------------------------------------ the shared helper


def test_resolve_inside_accepts_inside_paths_and_inside_links(world: tuple[Path, Path]) -> None:
    project, _ = world
    (project / "docs").mkdir()
    (project / "alias").symlink_to(project / "docs", target_is_directory=True)
    assert resolve_inside(project, "brief.md", what="x") == (project / "brief.md").resolve()
    assert resolve_inside(project, project / "brief.md", what="x") == project / "brief.md"
    # Nothing needs to exist, and a symlink that stays inside is fine.
    assert resolve_inside(project, "alias/new.md", what="x") == project / "docs" / "new.md"
    # A project root reached through a symlink still contains its own files.
    link_root = project.parent / "proj-link"
    link_root.symlink_to(project, target_is_directory=True)
    assert resolve_inside(link_root, "brief.md", what="x") == project / "brief.md"


def test_resolve_inside_refuses_every_escape_and_names_the_link(
    world: tuple[Path, Path],
) -> None:
    project, outside = world
    (project / "link.md").symlink_to(outside / "plan.md")
    (project / "dir").symlink_to(outside, target_is_directory=True)
    (project / "dangling").symlink_to(outside / "nothing-yet")
    cases = {
        "../outside/plan.md": f"got {outside / 'plan.md'}",
        str(outside / "plan.md"): f"got {outside / 'plan.md'}",
        "link.md": f"{project / 'link.md'} is a symlink to {outside / 'plan.md'}",
        "dir/plan.md": f"{project / 'dir'} is a symlink to {outside}",
        "dangling": f"{project / 'dangling'} is a symlink to {outside / 'nothing-yet'}",
    }
    for value, how in cases.items():
        with pytest.raises(PrepareError) as info:
            resolve_inside(project, value, what="the plan", field="--plan", error=PrepareError)
        text = info.value.render()
        assert text.startswith("--plan: the plan must be inside the project"), text
        assert how in text, (value, text)


def test_resolve_inside_symlink_loop_is_an_error_not_a_traceback(
    world: tuple[Path, Path],
) -> None:
    project, _ = world
    (project / "a").symlink_to(project / "b")
    (project / "b").symlink_to(project / "a")
    with pytest.raises(OkstraError):
        resolve_inside(project, "a/x.md", what="the brief")
    with pytest.raises(OkstraError, match="cannot be resolved"):
        resolve_inside(project, "nul\0byte", what="the brief")


# ------------------------------------------------------------------ the approved plan


@pytest.mark.parametrize("kind", ["dotdot", "absolute", "link", "dir-link"])
def test_approved_plan_outside_the_project_is_refused(world: tuple[Path, Path], kind: str) -> None:
    project, outside = world
    (project / "link.md").symlink_to(outside / "plan.md")
    (project / "dir").symlink_to(outside, target_is_directory=True)
    value = {
        "dotdot": "../outside/plan.md",
        "absolute": str(outside / "plan.md"),
        "link": "link.md",
        "dir-link": "dir/plan.md",
    }[kind]
    troot = project / ".okstra/tasks/grp/tsk"
    with pytest.raises(PrepareError) as info:
        check_approved_plan(value, project_root=project, task_root=troot)
    assert info.value.field == "--approved-plan"
    assert "inside the project" in info.value.message
    # The same plan inside the project passes.
    assert check_approved_plan("plan.md", project_root=project, task_root=troot).stages


def test_plan_data_json_symlinked_outside_is_refused(world: tuple[Path, Path]) -> None:
    project, outside = world
    (outside / "data.json").write_bytes(orjson.dumps({"approved": True}))
    (project / "data.json").symlink_to(outside / "data.json")
    with pytest.raises(PrepareError, match=r"data\.json must be inside the project"):
        check_approved_plan(
            "plan.md", project_root=project, task_root=project / ".okstra/tasks/grp/tsk"
        )


# ------------------------------------------------------------------ the task root


@pytest.mark.parametrize("link", [".okstra", ".okstra/tasks", ".okstra/tasks/grp", "task"])
@pytest.mark.parametrize("dry_run", [False, True])
def test_symlinked_task_dirs_leaving_the_project_are_refused_before_any_write(
    world: tuple[Path, Path],
    env: Environment,
    okstra_home: Path,
    link: str,
    dry_run: bool,
) -> None:
    project, outside = world
    path = project / (".okstra/tasks/grp/tsk" if link == "task" else link)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(outside, target_is_directory=True)
    before = (tree(project), tree(outside), tree(okstra_home))
    with pytest.raises(PrepareError) as info:
        prepare(inputs(project), launch="none", dry_run=dry_run, environment=env)
    assert f"{path}: is a symbolic link (to {outside})" in info.value.render()
    assert (tree(project), tree(outside), tree(okstra_home)) == before


def test_symlinked_lock_file_is_not_truncated(world: tuple[Path, Path], env: Environment) -> None:
    project, outside = world
    (project / ".okstra").mkdir()
    lock = project / ".okstra" / "project.json.lock"
    lock.symlink_to(outside / "victim")
    with pytest.raises(PrepareError, match=r"project\.json\.lock: is a symbolic link"):
        prepare(inputs(project), launch="none", environment=env)
    assert (outside / "victim").read_text(encoding="utf-8") == "keep me\n"


def test_okstra_dir_symlinked_inside_the_project_is_refused_too(
    world: tuple[Path, Path], env: Environment
) -> None:
    """`.okstra -> config` would make prepare rewrite `config/project.json`: refused."""
    project, _ = world
    (project / "store").mkdir()
    (project / "store" / "project.json").write_text('{"app": 1}', encoding="utf-8")
    (project / ".okstra").symlink_to(project / "store", target_is_directory=True)
    before = tree(project)
    with pytest.raises(PrepareError, match=r"\.okstra: is a symbolic link"):
        prepare(inputs(project), launch="none", environment=env)
    assert tree(project) == before


# ------------------------------------------------------------------ project.json


def test_project_json_is_reread_at_write_time(world: tuple[Path, Path], env: Environment) -> None:
    """A prepare of another task that lands between validation and write is kept."""
    project, _ = world
    pj = project / ".okstra" / "project.json"
    pj.parent.mkdir()
    pj.write_bytes(orjson.dumps({"projectId": "p", "custom": {"keep": 1}}))
    nested: list[str] = []

    def on_step(step: str) -> None:
        # The outer prepare read project.json during validation; now another task's
        # prepare runs to completion and adds a key of its own.
        if step == "allocating the run sequence" and not nested:
            nested.append(prepare(inputs(project, task_id="other"), launch="none",
                                  environment=env).run_id)  # fmt: skip
            data = orjson.loads(pj.read_bytes())
            data["addedMeanwhile"] = True
            pj.write_bytes(orjson.dumps(data))

    result = prepare(inputs(project), launch="none", environment=env, on_step=on_step)
    assert nested
    data = orjson.loads(pj.read_bytes())
    assert set(data["tasks"]) == {"grp/other", "grp/tsk"}
    assert data["custom"] == {"keep": 1} and data["addedMeanwhile"] is True
    assert data["projectId"] == "p"
    assert data["lastPreparedRun"]["taskKey"] == "grp/tsk"
    # The reported digest is of what was written.
    (planned,) = [f for f in result.files if f.path == pj]
    assert planned.sha256 == hashlib.sha256(pj.read_bytes()).hexdigest()


def test_dry_run_lists_project_json_and_writes_nothing(
    world: tuple[Path, Path], env: Environment, okstra_home: Path
) -> None:
    project, _ = world
    before = (tree(project), tree(okstra_home))
    result = prepare(inputs(project), launch="none", dry_run=True, environment=env)
    assert (tree(project), tree(okstra_home)) == before
    (planned,) = [f for f in result.files if f.path == project / ".okstra/project.json"]
    assert planned.action == "upsert" and len(planned.sha256) == 64
    assert b'"grp/tsk"' in planned.content
