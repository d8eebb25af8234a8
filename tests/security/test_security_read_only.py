"""Read-only works read-only: `runs`, `status`, `resume` and `report` on a project okstra
cannot write.

Two real ways to make the project unwritable, each skipped (alone) where the machine
cannot do it: the immutable attribute (`chattr +i`, which even root cannot write
through) and a project owned by `nobody`, made read-only and read by `nobody`
(`setpriv --reuid`), so no root privilege bypasses the modes. The run's lead ended
unseen, so a look would record its end: the commands still work (exit 0), say in a note
that the end was not recorded, and change nothing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.conftest import okstra_cmd
from tests.launch import test_launch_resume_cmd as resume_world
from tests.security.hostile_runs import RUN, dead_pid, prepared_project, tree

NOBODY = 65534


def _chattr_refused() -> str | None:
    if shutil.which("chattr") is None:
        return "chattr(1) is not installed"
    probe = Path(tempfile.mkdtemp(prefix="okstra-chattr-"))
    try:
        done = subprocess.run(["chattr", "+i", str(probe)], capture_output=True, check=False)
        if done.returncode != 0:
            return f"chattr +i is not permitted here: {done.stderr.decode().strip()}"
        try:
            (probe / "x").write_bytes(b"")
        except OSError:
            return None
        return "chattr +i does not stop writes here"
    finally:
        subprocess.run(["chattr", "-i", str(probe)], capture_output=True, check=False)
        shutil.rmtree(probe, ignore_errors=True)


def _setpriv_refused() -> str | None:
    if os.geteuid() != 0:
        return "changing to another user needs root"
    if shutil.which("setpriv") is None:
        return "setpriv(1) is not installed"
    done = subprocess.run(
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *okstra_cmd(),
         "--version"],
        capture_output=True,
        check=False,
    )  # fmt: skip
    if done.returncode != 0:
        return f"okstra cannot run as uid {NOBODY} here: {done.stderr.decode().strip()}"
    return None


def ended_unseen(project: Path) -> None:
    """The run's lead was launched in the foreground and its process is gone unrecorded."""
    path = project / ".okstra/tasks/perf/widget/runs" / RUN / "run-manifest.json"
    manifest = orjson.loads(path.read_bytes())
    manifest["participants"][0].update(
        status="launched", launchBackend="exec", processId=dead_pid(), processStart="1"
    )
    path.write_bytes(orjson.dumps(manifest))


Runner = Callable[[list[str]], subprocess.CompletedProcess[bytes]]


@pytest.fixture
def shared_base() -> Iterator[Path]:
    """A directory another user may traverse (pytest's own are private to root)."""
    base = Path(tempfile.mkdtemp(prefix="okstra-readonly-"))
    base.chmod(0o755)
    yield base
    subprocess.run(["chattr", "-R", "-i", str(base)], capture_output=True, check=False)
    shutil.rmtree(base, ignore_errors=True)


def immutable(project: Path, env: dict[str, str]) -> Runner:
    refused = _chattr_refused()
    if refused is not None:
        pytest.skip(refused)
    subprocess.run(["chattr", "-R", "+i", str(project / ".okstra")], check=True)

    def run(args: list[str]) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [*okstra_cmd(), *args], cwd=project, env=env, capture_output=True, timeout=90,
            stdin=subprocess.DEVNULL, check=False,
        )  # fmt: skip

    return run


def as_nobody(project: Path, env: dict[str, str]) -> Runner:
    refused = _setpriv_refused()
    if refused is not None:
        pytest.skip(refused)
    home = project.parent / "nobody-home"
    home.mkdir()
    for path in (home, project, *project.rglob("*")):
        os.chown(path, NOBODY, NOBODY, follow_symlinks=False)
    for path in (project, *project.rglob("*")):
        if not path.is_symlink():
            path.chmod(path.stat().st_mode & ~0o222)
    nobody_env = {**env, "HOME": str(home), "OKSTRA_HOME": str(home / "okstra")}

    def run(args: list[str]) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
             *okstra_cmd(), *args],
            cwd=project, env=nobody_env, capture_output=True, timeout=90,
            stdin=subprocess.DEVNULL, check=False,
        )  # fmt: skip

    return run


@pytest.mark.parametrize("how", [immutable, as_nobody], ids=["chattr", "nobody"])
def test_looking_at_a_read_only_project_works_and_notes_what_was_not_recorded(
    shared_base: Path, how: Callable[[Path, dict[str, str]], Runner]
) -> None:
    project, env = prepared_project(shared_base)
    ended_unseen(project)
    # The same look on a writable copy: does it record the end?
    copy = shared_base / "copy"
    shutil.copytree(project, copy, symlinks=True)
    done = subprocess.run(
        [*okstra_cmd(), "status", RUN, "--json"], cwd=copy, env=env, capture_output=True,
        timeout=90, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    records = tree(copy / ".okstra") != tree(project / ".okstra")
    shutil.rmtree(copy)
    run = how(project, env)
    before = tree(shared_base)
    for args in (
        ["runs"],
        ["runs", "--json"],
        ["status", RUN],
        ["status", RUN, "--json"],
        ["resume", RUN, "--wait", "0"],
        ["report", "roles", RUN],
        ["report", "roles", RUN, "--markdown"],
    ):
        proc = run(args)
        assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
        assert b"Traceback" not in proc.stderr
        said = (proc.stdout + proc.stderr).decode()
        if records and args[0] in ("runs", "status", "resume"):
            assert "not recorded" in said, (args, said)
        if args == ["status", RUN, "--json"]:
            doc = orjson.loads(proc.stdout)
            assert doc["runState"] == "ok" and doc["lead"] is not None
    after = tree(shared_base)
    after = {k: v for k, v in after.items() if not k.startswith("nobody-home")}
    before = {k: v for k, v in before.items() if not k.startswith("nobody-home")}
    assert after == before


def test_a_found_session_id_on_a_read_only_project_is_given_with_a_note(
    tmp_path: Path, fake_path: Path
) -> None:
    refused = _chattr_refused()
    if refused is not None:
        pytest.skip(refused)
    project = tmp_path / "proj"
    project.mkdir()
    (project / "brief.md").write_text("Speed up the widget.\n", encoding="utf-8")
    (tmp_path / "codex-home").mkdir()
    world: dict[str, Any] = {
        "project": project,
        "codex_home": tmp_path / "codex-home",
        "tmp": tmp_path,
        "env": {
            **os.environ,
            "FAKE_CLI_HELP": resume_world.FAKE_HELP,
            "CODEX_HOME": str(tmp_path / "codex-home"),
        },
    }
    run_dir = resume_world.prepare(world, "codex/gpt-5.6-sol")
    resume_world.rollout(world, resume_world.SID)
    okstra_dir = world["project"] / ".okstra"
    before = tree(okstra_dir)
    subprocess.run(["chattr", "-R", "+i", str(okstra_dir)], check=True)
    try:
        code, doc, stderr = resume_world.okstra(world, "resume", RUN, "--wait", "0")
    finally:
        subprocess.run(["chattr", "-R", "-i", str(okstra_dir)], check=True)
    assert code == 0, (doc, stderr)
    assert doc["ok"] is True and doc["discovered"] == ["participant-001"]
    (entry,) = doc["participants"]
    assert entry["sessionId"] == resume_world.SID
    assert any("not recorded" in note for note in doc["notes"]), doc["notes"]
    assert tree(okstra_dir) == before
    # Once writable again, the same call records it.
    code, doc, _ = resume_world.okstra(world, "resume", RUN, "--wait", "0")
    assert code == 0 and doc["notes"] == [] and doc["discovered"] == ["participant-001"]
    assert orjson.loads((run_dir / "resume.json").read_bytes())["participants"][0]["sessionId"]
