"""Real broken disks for the disk tests: a tiny tmpfs that fills up or goes read-only.

`test_security_disks.py` runs this module in a private mount namespace
(`unshare -rm python -m tests.security.disk_support SCENARIO CONFIG`): it mounts a
small tmpfs over a folder of a scratch world (the project's `.okstra` or the
`OKSTRA_HOME`), drives the installed `okstra` into the broken disk, and prints what
happened as one JSON document (exit codes, the JSON each call printed, its stderr, the
files before and after). The test process judges the facts; nothing here asserts.

The mount is gone when the namespace's last process exits, so nothing outlives a run.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.reliability.reliability_support import (
    World,
    answer_for_json,
    check_project_files,
    okstra,
    prepare_argv,
)

PAGE = 4096
FILLER = "zz-filler.bin"


def mount_tmpfs(where: Path, size: str) -> None:
    where.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(where)],
                   check=True, capture_output=True)  # fmt: skip


def remount_read_only(where: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True, capture_output=True)


def fill(where: Path, *, leave_pages: int = 0) -> None:
    """Fill the tmpfs at `where` to the last page, then free `leave_pages` pages."""
    filler = where / FILLER
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        chunk = b"\0" * PAGE
        while True:
            try:
                os.write(fd, chunk)
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
                break
        size = os.fstat(fd).st_size
        os.ftruncate(fd, max(0, size - size % PAGE - leave_pages * PAGE))
    finally:
        os.close(fd)


def unfill(where: Path) -> None:
    (where / FILLER).unlink(missing_ok=True)


def limit_inodes(where: Path, *, leave: int) -> None:
    """Let the tmpfs at `where` hold only `leave` more files and directories."""
    st = os.statvfs(where)
    used = st.f_files - st.f_ffree
    subprocess.run(["mount", "-o", f"remount,nr_inodes={used + leave}", str(where)],
                   check=True, capture_output=True)  # fmt: skip


def unlimit_inodes(where: Path) -> None:
    subprocess.run(["mount", "-o", "remount,nr_inodes=100000", str(where)],
                   check=True, capture_output=True)  # fmt: skip


def snapshot(*roots: Path) -> dict[str, str]:
    """Every file under `roots` (but the filler): path -> sha256 of its bytes."""
    out: dict[str, str] = {}
    for root in roots:
        for dirpath, dirs, files in os.walk(root):
            for name in dirs:
                out[str(Path(dirpath, name)) + "/"] = "dir"
            for name in files:
                if name == FILLER:
                    continue
                path = Path(dirpath, name)
                out[str(path)] = (
                    "link" if path.is_symlink() else hashlib.sha256(path.read_bytes()).hexdigest()
                )
    return out


def call(world: World, *args: str) -> dict[str, Any]:
    run = okstra(world, *args, timeout=60)
    return {
        "args": list(args),
        "code": run.code,
        "doc": run.doc,
        "stderr": run.stderr.decode("utf-8", "replace"),
    }


def wizard_steps(world: World, state: Path, count: int) -> list[dict[str, Any]]:
    """Create a wizard with `okstra wizard init` and answer `count` steps."""
    calls = [call(world, "wizard", "init", "--state", str(state), "--project-root",
                  str(world.project), "--host", "terminal")]  # fmt: skip
    for _ in range(count):
        calls.append(call(world, "wizard", "step", "--state", str(state), "--no-submit"))
        prompt = calls[-1]["doc"]["next"]
        answer = _answer(prompt)
        calls.append(call(world, "wizard", "step", "--state", str(state), "--answer=" + answer))
    return calls


def _answer(prompt: dict[str, Any]) -> str:
    return answer_for_json(prompt)


# ------------------------------------------------------------------ scenarios


def home_step(world: World, mode: str) -> dict[str, Any]:
    """OKSTRA_HOME on a tmpfs; a wizard is answered a few steps; the disk breaks; a step."""
    mount_tmpfs(world.home, "256k")
    world.wizards.mkdir(parents=True)
    state = world.wizards / "w.json"
    setup = wizard_steps(world, state, 3)
    facts: dict[str, Any] = {"setup": setup, "state": str(state)}
    facts["before"] = snapshot(world.home)
    if mode == "full":
        fill(world.home)
    else:
        remount_read_only(world.home)
    answer = _answer(setup[-1]["doc"]["next"])
    facts["calls"] = [
        call(world, "wizard", "show", "--state", str(state)),
        call(world, "wizard", "step", "--state", str(state), "--no-submit"),
        call(world, "wizard", "step", "--state", str(state), "--answer=" + answer),
        call(world, "wizard", "step", "--state", str(state), "--back"),
        call(
            world,
            "wizard",
            "init",
            "--state",
            str(world.wizards / "new.json"),
            "--project-root",
            str(world.project),
            "--host",
            "terminal",
        ),
        call(world, "wizard", "list"),
        call(world, *prepare_argv(world.project), "--launch=none"),
    ]
    facts["after"] = snapshot(world.home)
    if mode == "full":
        unfill(world.home)
        facts["recovered"] = call(
            world, "wizard", "step", "--state", str(state), "--answer=" + answer
        )
    return facts


def okstra_dir_prepare(world: World, mode: str, pages: int) -> dict[str, Any]:
    """The project's `.okstra` on a tmpfs; a first prepare; the disk breaks; prepares.

    For a full disk the prepare is repeated with 0, 1, 2, … free pages (one page per
    small file on tmpfs) until one succeeds, so every write of a prepare is the one
    that meets the full disk once; for `inodes`, the same with 0, 1, 2, … files and
    directories left to create (a file system out of inodes is ENOSPC too, met by
    `mkdir`, a temp file or a lock sidecar instead of a write).
    """
    okstra_dir = world.project / ".okstra"
    mount_tmpfs(okstra_dir, "512k")
    first = call(world, *prepare_argv(world.project), "--launch=none")
    facts: dict[str, Any] = {"first": first, "attempts": []}
    if first["code"] != 0:
        return facts
    if mode == "ro":
        before = snapshot(okstra_dir, world.home)
        remount_read_only(okstra_dir)
        run = call(world, *prepare_argv(world.project), "--launch=none")
        facts["attempts"].append(
            {"pages": None, "run": run, "before": before, "after": snapshot(okstra_dir, world.home)}
        )
        return facts
    for leave in range(pages):
        before = snapshot(okstra_dir, world.home)
        logs = {p: Path(p).read_bytes() for p in before if p.endswith(".jsonl")}
        if mode == "inodes":
            limit_inodes(okstra_dir, leave=leave)
        else:
            fill(okstra_dir, leave_pages=leave)
        run = call(world, *prepare_argv(world.project), "--launch=none")
        after = snapshot(okstra_dir, world.home)
        if mode == "inodes":
            unlimit_inodes(okstra_dir)
        else:
            unfill(okstra_dir)
        facts["attempts"].append({
            "pages": leave, "run": run, "before": before, "after": after,
            # Logs only grow by whole records: the old bytes are a prefix of the new.
            "logsKept": all(Path(p).read_bytes().startswith(old) for p, old in logs.items()),
            "check": _check(world),
        })  # fmt: skip
        if run["code"] == 0:
            break
    return facts


def home_prepare(world: World, mode: str) -> dict[str, Any]:
    """OKSTRA_HOME on a tmpfs that is full or read-only; the project is fine; a prepare.

    The run is written in the project; the central runs index in OKSTRA_HOME cannot
    take its record: the run is complete but not indexed, and okstra says so.
    """
    mount_tmpfs(world.home, "256k")
    world.wizards.mkdir(parents=True)
    # No earlier prepare: the runs index would have room left in its last page.
    first = call(world, "wizard", "list")
    before = snapshot(world.home)
    if mode == "full":
        fill(world.home)
    else:
        remount_read_only(world.home)
    run = call(world, *prepare_argv(world.project), "--launch=none")
    return {"first": first, "run": run, "before": before, "after": snapshot(world.home)}


def _check(world: World) -> str | None:
    """Every file under `.okstra` parses, every manifest loads, no log is torn."""
    try:
        check_project_files(world.project)
    except Exception as exc:  # reported to the test, which fails with it
        return f"{type(exc).__name__}: {exc}"
    return None


SCENARIOS = {"home_step": home_step, "okstra_dir_prepare": okstra_dir_prepare,
             "home_prepare": home_prepare}  # fmt: skip


def main() -> None:
    config = json.loads(sys.argv[2])
    world = World(
        root=Path(config["root"]),
        project=Path(config["project"]),
        home=Path(config["home"]),
        bin=Path(config["bin"]),
    )
    facts = SCENARIOS[sys.argv[1]](world, *config.get("args", []))
    sys.stdout.write(json.dumps(facts) + "\n")


if __name__ == "__main__":
    main()
