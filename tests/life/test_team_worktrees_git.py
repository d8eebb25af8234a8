"""A writer's worktree with real git: made outside the project, its leftovers committed as
okstra, its diff against its base, merged (or refused, changing nothing), discarded."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from okstra_core.errors import MergeConflictError, UsageError
from okstra_core.life import worktrees as wt

# No identity at all: okstra's commits must not need the person's.
GIT_ENV = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "GIT_CONFIG_NOSYSTEM": "1"}


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(cwd), *args], env=GIT_ENV, capture_output=True, text=True, check=True
    )
    return done.stdout


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "a.txt").write_text("one\ntwo\nthree\n")
    (root / "b.txt").write_text("bee\n")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "base")
    return root


def _writer(tmp_path: Path, tree: wt.Tree, name: str) -> wt.Checkout:
    branch = wt.branch_name("perf", "widget", "implementation-001", name, 1)
    path = wt.worktree_path(tmp_path / "worktrees", "proj-id", branch)
    assert tree.head is not None
    return wt.make(tree, path, branch, tree.head, env=GIT_ENV)


def test_a_writer_worktree_lives_outside_and_keeps_what_it_left(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    tree = wt.project_tree(root, GIT_ENV)
    assert tree is not None and tree.branch == "main" and tree.sub == ""
    made = _writer(tmp_path, tree, "implementer")
    assert made.branch == "okstra/perf/widget/implementation-001/implementer-1"
    assert not made.path.is_relative_to(root)
    assert (made.path / "a.txt").read_text() == "one\ntwo\nthree\n"
    (made.path / "a.txt").write_text("one\nTWO\nthree\n")
    (made.path / "new.txt").write_text("fresh\n")
    # The diff sees committed and uncommitted work, new files included, and changes nothing.
    stat = wt.diff(tree.top, made.path, made.branch, made.base, stat=True, env=GIT_ENV)
    assert "a.txt" in stat and "new.txt" in stat
    assert git(made.path, "status", "--porcelain") == " M a.txt\n?? new.txt\n"
    commit = wt.commit_leftovers(made.path, "implementer#1", env=GIT_ENV)
    assert commit is not None
    assert git(made.path, "log", "-1", "--format=%an <%ae>|%s") == (
        "okstra <okstra@localhost>|okstra: implementer#1 (uncommitted at exit)\n"
    )
    assert wt.commit_leftovers(made.path, "implementer#1", env=GIT_ENV) is None
    patch = wt.diff(tree.top, made.path, made.branch, made.base, env=GIT_ENV)
    assert "+TWO" in patch and "+fresh" in patch
    # The project's own checkout is untouched.
    assert (root / "a.txt").read_text() == "one\ntwo\nthree\n" and not (root / "new.txt").exists()


def test_the_diff_sees_a_change_made_in_the_same_second_as_the_index(tmp_path: Path) -> None:
    # Git trusts an index entry whose file kept its size and times unless the entry is as
    # new as the index file ("racily clean"): then it reads the file. The diff stages in a
    # copy of the writer's index, which must keep the index's time, or a same-size change
    # made in the index's second is missed. The times are set, not waited for.
    import os

    root = _repo(tmp_path)
    git(root, "config", "core.trustctime", "false")  # the test sets mtimes, not ctimes
    tree = wt.project_tree(root, GIT_ENV)
    assert tree is not None
    made = _writer(tmp_path, tree, "implementer")
    past = 1_700_000_000
    target = made.path / "a.txt"
    os.utime(target, (past, past))
    git(made.path, "update-index", "--refresh")  # the entry records the old time
    index = Path(git(made.path, "rev-parse", "--absolute-git-dir").strip()) / "index"
    os.utime(index, (past, past))  # ... and the index is of that same second
    target.write_text("one\nTWO\nthree\n")  # same size
    os.utime(target, (past, past))
    stat = wt.diff(tree.top, made.path, made.branch, made.base, stat=True, env=GIT_ENV)
    assert "a.txt" in stat, stat


def test_two_writers_on_different_files_both_merge(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    tree = wt.project_tree(root, GIT_ENV)
    assert tree is not None
    one, two = _writer(tmp_path, tree, "implementer"), _writer(tmp_path, tree, "fixer")
    (one.path / "a.txt").write_text("one\ntwo\nthree\nfour\n")
    (two.path / "b.txt").write_text("bee\nbuzz\n")
    for made in (one, two):
        wt.commit_leftovers(made.path, made.branch, env=GIT_ENV)
    first = wt.merge(tree, one.branch, one.base, "implementer#1", env=GIT_ENV)
    assert first.files == ("a.txt",) and first.into == "main"
    tree = wt.project_tree(root, GIT_ENV)
    assert tree is not None
    second = wt.merge(tree, two.branch, two.base, "fixer#1", squash=True, env=GIT_ENV)
    assert second.squash and second.files == ("b.txt",)
    assert (root / "a.txt").read_text().endswith("four\n")
    assert (root / "b.txt").read_text() == "bee\nbuzz\n"
    assert git(root, "status", "--porcelain") == ""


def test_a_conflict_is_named_and_nothing_is_lost(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    tree = wt.project_tree(root, GIT_ENV)
    assert tree is not None
    one, two = _writer(tmp_path, tree, "implementer"), _writer(tmp_path, tree, "fixer")
    (one.path / "a.txt").write_text("one\nTWO-by-one\nthree\n")
    (two.path / "a.txt").write_text("one\nTWO-by-two\nthree\n")
    for made in (one, two):
        wt.commit_leftovers(made.path, made.branch, env=GIT_ENV)
    wt.merge(tree, one.branch, one.base, "implementer#1", env=GIT_ENV)
    head = git(root, "rev-parse", "HEAD")
    tip = git(root, "rev-parse", two.branch)
    with pytest.raises(MergeConflictError) as caught:
        wt.merge(tree, two.branch, two.base, "fixer#1", env=GIT_ENV)
    assert caught.value.files == ("a.txt",) and "a.txt" in caught.value.message
    # Both sides as they were: the project's branch, its tree, and the writer's branch.
    assert git(root, "rev-parse", "HEAD") == head and git(root, "status", "--porcelain") == ""
    assert git(root, "rev-parse", two.branch) == tip
    assert (root / "a.txt").read_text() == "one\nTWO-by-one\nthree\n"
    assert (two.path / "a.txt").read_text() == "one\nTWO-by-two\nthree\n"


def test_a_merge_over_uncommitted_changes_is_refused_unchanged(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    tree = wt.project_tree(root, GIT_ENV)
    assert tree is not None
    made = _writer(tmp_path, tree, "implementer")
    (made.path / "a.txt").write_text("changed\n")
    wt.commit_leftovers(made.path, "implementer#1", env=GIT_ENV)
    (root / "a.txt").write_text("mine, not committed\n")
    head = git(root, "rev-parse", "HEAD")
    with pytest.raises(UsageError, match=r"uncommitted changes to files implementer#1 .*a\.txt"):
        wt.merge(tree, made.branch, made.base, "implementer#1", env=GIT_ENV)
    assert git(root, "rev-parse", "HEAD") == head
    assert (root / "a.txt").read_text() == "mine, not committed\n"
    # Uncommitted changes to other files do not stand in the way.
    (root / "a.txt").write_text("one\ntwo\nthree\n")
    (root / "b.txt").write_text("mine\n")
    wt.merge(tree, made.branch, made.base, "implementer#1", env=GIT_ENV)
    assert (root / "a.txt").read_text() == "changed\n" and (root / "b.txt").read_text() == "mine\n"


def test_discard_leaves_no_worktree_and_no_branch(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    tree = wt.project_tree(root, GIT_ENV)
    assert tree is not None
    made = _writer(tmp_path, tree, "implementer")
    (made.path / "x.txt").write_text("x\n")
    assert wt.okstra_worktrees(root, GIT_ENV) == [(made.path, made.branch)]
    steps = wt.discard(tree.top, made.path, made.branch, env=GIT_ENV)
    assert len(steps) == 2 and not made.path.exists()
    assert wt.okstra_worktrees(root, GIT_ENV) == []
    assert made.branch not in git(root, "branch", "--list")
    assert "okstra" not in git(root, "worktree", "list")


def test_not_a_git_project(tmp_path: Path) -> None:
    assert wt.project_tree(tmp_path, GIT_ENV) is None
