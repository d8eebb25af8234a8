"""Without --project-root the project is the repository: nearest .okstra, git top, cwd."""

from __future__ import annotations

import os
from pathlib import Path

from life_support import base_env, make_fake_clis, okstra_json

from okstra_core.discovery import default_project_root, git_top


def _env(tmp_path: Path) -> dict[str, str]:
    # HOME above the test's directories: the walk stops at the home directory.
    return {"HOME": str(tmp_path.parent)}


def test_the_git_top_level_is_the_project(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    deep = repo / "src" / "deep"
    deep.mkdir(parents=True)
    (repo / ".git").mkdir()
    assert git_top(deep, _env(tmp_path)) == repo.resolve()
    assert default_project_root(deep, _env(tmp_path)) == repo.resolve()


def test_a_git_file_worktree_counts_and_the_nearest_okstra_wins(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    sub = repo / "pkg"
    deep = sub / "src"
    deep.mkdir(parents=True)
    (repo / ".git").write_text("gitdir: /elsewhere/.git/worktrees/x\n", encoding="utf-8")
    assert default_project_root(deep, _env(tmp_path)) == repo.resolve()
    (sub / ".okstra").mkdir(mode=0o700)
    assert default_project_root(deep, _env(tmp_path)) == sub.resolve()


def test_no_okstra_no_git_is_the_current_directory(tmp_path: Path) -> None:
    here = tmp_path / "plain" / "dir"
    here.mkdir(parents=True)
    assert default_project_root(here, _env(tmp_path)) == here.resolve()


def test_an_unsafe_ancestor_is_not_adopted(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    here = shared / "mine"
    here.mkdir(parents=True)
    (shared / ".git").mkdir()
    (shared / ".okstra").mkdir()
    os.chmod(shared, 0o777)  # writable by every user: neither its .okstra nor its .git
    try:
        assert git_top(here, _env(tmp_path)) is None
        assert default_project_root(here, _env(tmp_path)) == here.resolve()
        allowed = {**_env(tmp_path), "OKSTRA_SAFE_DIRECTORIES": str(shared)}
        assert default_project_root(here, allowed) == shared.resolve()
    finally:
        os.chmod(shared, 0o755)


def test_a_run_prepared_from_a_subdirectory_lands_in_the_repository(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    deep = repo / "src" / "deep"
    deep.mkdir(parents=True)
    (repo / ".git").mkdir()
    (repo / "brief.md").write_text("Speed up the widget.\n", encoding="utf-8")
    env = base_env(make_fake_clis(tmp_path / "bin"), tmp_path)
    args = [
        "prepare", "--task-group", "perf", "--task-id", "widget",
        "--task-type", "requirements-discovery", "--brief", "brief.md",
        "--host", "terminal", "--launch", "none",
    ]  # fmt: skip
    code, doc = okstra_json(args, cwd=deep, env=env)
    assert code == 0, doc
    assert Path(doc["runDir"]).is_relative_to(repo.resolve() / ".okstra")
    assert not (deep / ".okstra").exists()
    # The next command from the subdirectory finds the same project.
    code, status = okstra_json(["status", "perf/widget", "--json"], cwd=deep, env=env)
    assert code == 0 and status["runDir"] == doc["runDir"]
