"""The project is found safely: a `.okstra` another user can write is refused, named.

A repository can carry any `.okstra`, and so can a shared parent directory like
`/tmp`. These tests plant such directories above (or at) the directory `okstra` runs
in, drive the installed command in a subprocess, and check that the search stops at the
first `.okstra` it meets and refuses it with a message naming the directory and
`OKSTRA_SAFE_DIRECTORIES` — never adopting it, never skipping it for a farther one,
never crossing the home directory or a mount — and that nothing is written.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from okstra_core.discovery import default_project_root, find_project_root, git_top
from tests.conftest import okstra_cmd
from tests.life.life_support import base_env, make_fake_clis, prepare_args

NOBODY = 65534


def run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    proc = subprocess.run(
        [*okstra_cmd(), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()
    assert proc.returncode != 70, proc.stderr.decode()
    return proc


def tree(root: Path) -> dict[str, str]:
    """Every entry under `root` (files with their digest): proof nothing was written."""
    found: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_symlink() or not path.is_file():
            found[rel] = "dir" if path.is_dir() else "other"
        else:
            found[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Any]:
    bin_dir = make_fake_clis(tmp_path / "bin")
    env = base_env(bin_dir, tmp_path, HOME=str(tmp_path / "home"))
    env.pop("OKSTRA_SAFE_DIRECTORIES", None)
    (tmp_path / "home").mkdir()
    return {"tmp": tmp_path, "env": env}


def planted_project(world: dict[str, Any], where: Path) -> Path:
    """A real project at `where` with one prepared run (made by okstra itself)."""
    where.mkdir(parents=True, exist_ok=True)
    (where / "brief.md").write_text("Speed up the widget.\n", encoding="utf-8")
    proc = run(prepare_args(where, "none"), where, world["env"])
    assert proc.returncode == 0, proc.stdout.decode() + proc.stderr.decode()
    return where


COMMANDS = (
    ["runs"],
    ["runs", "--json"],
    ["status", "requirements-discovery-001"],
    ["status", "perf/widget", "--json"],
    ["resume", "requirements-discovery-001", "--wait", "0", "--json"],
    ["report", "roles", "requirements-discovery-001"],
)


def assert_refused(
    world: dict[str, Any], start: Path, refused: Path, why: str, *, hint: bool = True
) -> None:
    before = tree(world["tmp"])
    for args in COMMANDS:
        proc = run(args, start, world["env"])
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        text = (proc.stderr + proc.stdout).decode()
        assert "refusing" in text and str(refused) in text, (args, text)
        assert why in text and "does not look further up" in text, (args, text)
        assert hint == (f"OKSTRA_SAFE_DIRECTORIES={refused}" in text), (args, text)
        if "--json" in args:
            assert orjson.loads(proc.stdout)["ok"] is False
        else:
            assert proc.stdout == b"" and b"\x1b" not in proc.stderr
    assert tree(world["tmp"]) == before


@pytest.mark.parametrize(
    "how", ["world-writable", "owned by nobody", "group-writable", "link", "file"]
)
def test_a_hostile_parent_okstra_is_refused_named_and_never_used(
    world: dict[str, Any], how: str
) -> None:
    shared = planted_project(world, world["tmp"] / "shared")
    child = shared / "work" / "child"
    child.mkdir(parents=True)
    okstra = shared / ".okstra"
    refused, why = shared, ""
    if how == "world-writable":
        shared.chmod(0o777)
        okstra.chmod(0o777)
        why = "writable by every user"
    elif how == "owned by nobody":
        os.chown(okstra, NOBODY, NOBODY)
        why = "belongs to"
    elif how == "group-writable":
        os.chown(okstra, os.geteuid(), NOBODY)
        okstra.chmod(0o770)
        why = "writable by the group"
    elif how == "link":
        okstra.rename(world["tmp"] / "real-okstra")
        okstra.symlink_to(world["tmp"] / "real-okstra")
        why = "is a symbolic link"
    else:
        shutil.rmtree(okstra)
        okstra.write_text("not a directory\n", encoding="utf-8")
        why = "is a regular file"
    assert_refused(world, child, refused, why, hint=how not in ("link", "file"))


def test_the_directory_itself_is_checked_and_the_safe_list_allows_it(
    world: dict[str, Any],
) -> None:
    project = planted_project(world, world["tmp"] / "mine")
    os.chown(project / ".okstra", NOBODY, NOBODY)
    assert_refused(world, project, project, "belongs to")
    # Named in OKSTRA_SAFE_DIRECTORIES (with another entry and a relative one, ignored).
    allowed = {
        **world["env"],
        "OKSTRA_SAFE_DIRECTORIES": os.pathsep.join(["relative/dir", "/nowhere", str(project)]),
    }
    proc = run(["runs", "--json"], project / ".okstra", allowed)
    assert proc.returncode == 0, proc.stderr
    (row,) = orjson.loads(proc.stdout)["runs"]
    assert row["runId"] == "requirements-discovery-001" and row["runState"] == "ok"


def test_a_refused_ancestor_is_not_skipped_for_a_farther_one(world: dict[str, Any]) -> None:
    outer = planted_project(world, world["tmp"] / "outer")
    inner = planted_project(world, outer / "inner")
    start = inner / "src"
    start.mkdir()
    (inner / ".okstra").chmod(0o777)
    assert_refused(world, start, inner, "writable by every user")
    # The outer project itself is fine: from there its run is found.
    proc = run(["status", "requirements-discovery-001", "--json"], outer, world["env"])
    assert proc.returncode == 0 and orjson.loads(proc.stdout)["projectRoot"] == str(outer)


def test_the_search_never_crosses_the_home_directory(world: dict[str, Any]) -> None:
    home = Path(world["env"]["HOME"])
    planted_project(world, home)
    work = home / "work" / "deep"
    work.mkdir(parents=True)
    proc = run(["runs"], work, world["env"])
    assert proc.returncode == 2 and b"not inside an okstra project" in proc.stderr
    # The home's own `.okstra` counts when the search starts there.
    proc = run(["runs", "--json"], home, world["env"])
    assert proc.returncode == 0 and orjson.loads(proc.stdout)["projectRoot"] == str(home)


def _mount_refused() -> str | None:
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        return "unshare(1) or mount(8) is not installed"
    probe = subprocess.run(
        ["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    if probe.returncode != 0:
        return f"mount namespaces are not permitted here: {probe.stderr.strip()}"
    return None


def test_the_search_never_crosses_a_mount(world: dict[str, Any]) -> None:
    refused = _mount_refused()
    if refused is not None:
        pytest.skip(refused)
    outer = planted_project(world, world["tmp"] / "outer")
    mount = outer / "mounted"
    mount.mkdir()
    script = (
        "import subprocess, sys\n"
        f"subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=1m,mode=0755', 'tmpfs', "
        f"{str(mount)!r}], check=True)\n"
        f"os_cmd = {[*okstra_cmd()]!r}\n"
        f"sub = {str(mount)!r} + '/src'\n"
        "import os; os.mkdir(sub)\n"
        "inside = subprocess.run([*os_cmd, 'runs'], cwd=sub, capture_output=True)\n"
        f"beside = subprocess.run([*os_cmd, 'runs', '--json'], cwd={str(outer)!r}, "
        "capture_output=True)\n"
        "import json\n"
        "print(json.dumps([inside.returncode, inside.stderr.decode(), beside.returncode]))\n"
    )
    done = subprocess.run(
        ["unshare", "-rm", sys.executable, "-c", script],
        env=world["env"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    code, stderr, beside = orjson.loads(done.stdout)
    assert code == 2 and "not inside an okstra project" in stderr, stderr
    assert "Traceback" not in stderr
    assert beside == 0


def test_started_in_home_the_search_stays_there(tmp_path: Path) -> None:
    """Started in `$HOME` itself, the search never climbs above it (to another user's
    `.okstra`, or a `.git`, in the directory holding the homes)."""
    homes = tmp_path / "homes"
    home = homes / "me"
    home.mkdir(parents=True)
    (homes / ".okstra").mkdir()  # someone else's, above the home
    (homes / ".git").mkdir()
    env = {"HOME": str(home)}
    assert find_project_root(home, env) is None
    assert git_top(home, env) is None
    assert default_project_root(home, env) == home.resolve()
    # Below the home, likewise; the home's own `.okstra` counts from there.
    (home / "w").mkdir()
    assert find_project_root(home / "w", env) is None
    (home / ".okstra").mkdir()
    assert find_project_root(home, env) == home.resolve()
    assert find_project_root(home / "w", env) is None
