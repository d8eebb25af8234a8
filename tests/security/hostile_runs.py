"""A hostile project for the run-listing tests (not a test module).

One real run is prepared by the installed `okstra`; then runs are planted next to it the
way a cloned repository could carry them: markup and terminal control sequences in every
printed field, absurd numbers, wrong types, huge strings, bytes that are not UTF-8, a
manifest that is a directory, a FIFO or a link, a run directory that is a link, names
with control characters, directories a killed prepare left, and a top-level directory
named like a run id.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from tests.conftest import okstra_cmd
from tests.life.life_support import base_env, make_fake_clis, prepare_args

RUN = "requirements-discovery-001"
# Terminal control sequences: clipboard write (OSC 52), window title, clear screen,
# a hidden link (OSC 8), a cursor move, a bidi override, and Rich markup.
OSC52 = "\x1b]52;c;cHduZWQ=\x07"
NASTY = f"{OSC52}\x1b]0;owned\x07\x1b[2J\x1b]8;;http://x.test\x07link\x1b]8;;\x07\x1b[5A\u202e[bold]b[/]"
ESC_NAME = f"requirements-discovery-0{OSC52}"
ESC_GROUP = "\x1b[31mred"


def okstra(
    args: list[str], cwd: Path, env: dict[str, str], *, stdin: Any = subprocess.DEVNULL
) -> subprocess.CompletedProcess[bytes]:
    proc = subprocess.run(
        [*okstra_cmd(), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        timeout=90,
        stdin=stdin,
        check=False,
    )
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()
    assert proc.returncode in (0, 1, 2), (args, proc.returncode, proc.stderr.decode())
    return proc


def tree(root: Path, *, skip: str | None = None) -> dict[str, str]:
    """Every entry under `root` (files with their digest), `skip` subtrees left out."""
    found: dict[str, str] = {}
    for folder, dirs, files in os.walk(root):
        if skip is not None:
            dirs[:] = [d for d in dirs if d != skip]
        for name in dirs:
            found[os.path.relpath(os.path.join(folder, name), root)] = "dir"
        for name in files:
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, root)
            if os.path.islink(path) or not os.path.isfile(path):
                found[rel] = "other"
            else:
                found[rel] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    return found


def prepared_project(tmp: Path) -> tuple[Path, dict[str, str]]:
    """A project with one run prepared by okstra, and the environment to drive it."""
    bin_dir = make_fake_clis(tmp / "bin")
    env = base_env(bin_dir, tmp)
    project = tmp / "proj"
    project.mkdir()
    (project / "brief.md").write_text("Speed up the widget.\n", encoding="utf-8")
    proc = okstra(prepare_args(project, "none"), project, env)
    assert proc.returncode == 0, proc.stdout.decode() + proc.stderr.decode()
    return project, env


def base_manifest(project: Path) -> dict[str, Any]:
    path = project / ".okstra/tasks/perf/widget/runs" / RUN / "run-manifest.json"
    data: dict[str, Any] = orjson.loads(path.read_bytes())
    return data


def run_dir(project: Path, group: str, task: str, name: str) -> Path:
    return project / ".okstra/tasks" / group / task / "runs" / name


def plant(
    project: Path,
    name: str,
    edit: Callable[[dict[str, Any]], None] | None = None,
    *,
    group: str = "hostile",
    task: str = "planted",
) -> Path:
    """A run directory holding a copy of the real manifest, named for where it lies."""
    manifest = base_manifest(project)
    manifest.update(runId=name, taskKey=f"{group}/{task}", taskGroup=group, taskId=task)
    if edit is not None:
        edit(manifest)
    where = run_dir(project, group, task, name)
    where.mkdir(parents=True)
    (where / "run-manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return where


def leader(manifest: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = manifest["participants"][0]
    return found


def _ended_with_nasty_fields(m: dict[str, Any]) -> None:
    leader(m).update(
        status="exited",
        exitStatus=1,
        launchBackend="tmux",
        exitedAt=NASTY,
        endDetail=NASTY,
        sessionRef=NASTY,
        windowRef=NASTY,
        paneRef=NASTY,
    )
    m["roleExecutions"][0]["executionLabel"] = f"a|b\nc {NASTY}"


def _pid(value: int) -> Callable[[dict[str, Any]], None]:
    def edit(m: dict[str, Any]) -> None:
        leader(m).update(status="launched", launchBackend="exec", processId=value)

    return edit


def _set(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(m: dict[str, Any]) -> None:
        m[key] = value

    return edit


def _huge(m: dict[str, Any]) -> None:
    leader(m).update(status="exited", exitStatus=0, endDetail="x" * 200_000)


def plant_all(project: Path) -> dict[str, Path]:
    """Plant every hostile run; return name → run directory."""
    planted: dict[str, Path] = {}

    def add(name: str, edit: Callable[[dict[str, Any]], None] | None, **kw: Any) -> Path:
        planted[name] = plant(project, name, edit, **kw)
        return planted[name]

    add("markup-taskkey-001", _set("taskKey", "[/bold]"))
    add("nasty-fields-001", _ended_with_nasty_fields)
    add("huge-pid-001", _pid(2**62))
    add("huger-pid-001", _pid(2**70))
    add("negative-pid-001", _pid(-1))
    add("wrong-types-001", _set("participants", "nobody"))
    add("wrong-key-type-001", _set("taskKey", 5))
    add("huge-string-001", _huge)
    add("markup-runid-001", _set("runId", "[/bold]"))
    non_utf8 = add("non-utf-eight-001", None)
    (non_utf8 / "run-manifest.json").write_bytes(b'{"runId": "\xff\xfe", "x": 1}')
    for name, make in (
        ("manifest-dir-001", lambda p: p.mkdir()),
        ("manifest-fifo-001", lambda p: os.mkfifo(p)),
        ("manifest-link-001", lambda p: p.symlink_to(planted["nasty-fields-001"] / p.name)),
    ):
        where = add(name, None)
        (where / "run-manifest.json").unlink()
        make(where / "run-manifest.json")
    link = run_dir(project, "hostile", "planted", "run-link-001")
    link.symlink_to(planted["nasty-fields-001"])
    planted["run-link-001"] = link
    add(ESC_NAME, None)
    add(f"escgroup-{RUN}", None, group=ESC_GROUP, task=f"task{OSC52}")
    # Left by killed prepares: empty, or only a temp file; old, and one still young.
    old = time.time() - 3600
    for name, temp in (("incomplete-007", False), ("incomplete-008", True)):
        where = run_dir(project, "hostile", "planted", name)
        where.mkdir()
        if temp:
            (where / ".okstra-tmp-abc123.part").write_bytes(b"{")
            os.utime(where / ".okstra-tmp-abc123.part", (old, old))
        os.utime(where, (old, old))
        planted[name] = where
    young = run_dir(project, "hostile", "planted", "incomplete-009")
    young.mkdir()
    planted["incomplete-009"] = young
    # A top-level directory named like the real run, whose lead "ended unseen": were it
    # taken for the run, `status` would record that end in the project's parent.
    top = project / RUN
    top.mkdir()
    decoy = base_manifest(project)
    leader(decoy).update(status="launched", launchBackend="exec", processId=dead_pid())
    (top / "run-manifest.json").write_bytes(orjson.dumps(decoy))
    return planted


def dead_pid() -> int:
    """The pid of a process that has ended (and been reaped)."""
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


STATES = {
    "markup-taskkey-001": "damaged",
    "huge-pid-001": "damaged",
    "huger-pid-001": "damaged",
    "negative-pid-001": "damaged",
    "wrong-types-001": "damaged",
    "wrong-key-type-001": "damaged",
    "huge-string-001": "damaged",
    "markup-runid-001": "damaged",
    "non-utf-eight-001": "damaged",
    "manifest-dir-001": "damaged",
    "manifest-fifo-001": "damaged",
    "manifest-link-001": "damaged",
    "run-link-001": "damaged",
    "incomplete-007": "incomplete",
    "incomplete-008": "incomplete",
    "incomplete-009": "incomplete",
}
# Valid runs whose printed fields are full of control sequences and markup.
CLEAN = ("nasty-fields-001", f"escgroup-{RUN}", ESC_NAME)
