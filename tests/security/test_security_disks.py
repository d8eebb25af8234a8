"""Real broken disks: a tiny tmpfs that fills up (ENOSPC) or is remounted read-only.

Each test mounts a small tmpfs in a private mount namespace (`unshare -rm`, so no
privilege and no trace outside the test) over the project's `.okstra` or over
`OKSTRA_HOME`, and drives the installed `okstra` into it (`tests/security/disk_support.py`).
Every failing call must exit 2 with one JSON error naming the path and the errno in
words ("No space left on device", "Read-only file system"), without a traceback; every
file that existed before is byte-identical afterwards (or, for the files a prepare
rewrites or appends to, a whole old or new version); no temp file is left behind; a
prepare that fails after it began writing names the run it left and its state.

Where mount namespaces are not permitted (some containers), the tests skip with the
reason. `RLIMIT_FSIZE` cases stay in `test_security_files.py` (a file-size limit
cuts a single write short in the middle, which a full tmpfs does not).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from okstra_core.store import TEMP_PREFIX
from tests.reliability.reliability_support import REPO, World, make_world

NO_SPACE = "No space left on device (ENOSPC)"
READ_ONLY = "Read-only file system (EROFS)"
# Files a prepare rewrites whole (by rename) or appends to: after a failure each is its
# old bytes or a whole new version, never torn.
REWRITTEN = ("project.json", "task-manifest.json", "task-index.md", "runs.jsonl.lock")
APPENDED = ("timeline.jsonl", "runs.jsonl")


@cache
def _mount_refused() -> str | None:
    """Why a tmpfs cannot be mounted in a private namespace here (None: it can)."""
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        return "unshare(1) or mount(8) is not installed"
    probe = subprocess.run(
        ["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt 2>&1 || "
         "mount -t tmpfs -o size=64k tmpfs /tmp 2>&1"],
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    if probe.returncode != 0:
        why = (probe.stdout + probe.stderr).strip().splitlines()
        return f"mounting a tmpfs in a user+mount namespace is not permitted: {why[-1:]}"
    return None


@pytest.fixture
def world(tmp_path: Path) -> World:
    refused = _mount_refused()
    if refused:
        pytest.skip(refused)
    return make_world(tmp_path)


def _scenario(world: World, name: str, *args: Any) -> dict[str, Any]:
    config = {
        "root": str(world.root),
        "project": str(world.project),
        "home": str(world.home),
        "bin": str(world.bin),
        "args": list(args),
    }
    proc = subprocess.run(
        ["unshare", "-rm", sys.executable, "-m", "tests.security.disk_support", name,
         json.dumps(config)],
        cwd=REPO, env=world.env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    facts: dict[str, Any] = json.loads(proc.stdout.splitlines()[-1])
    return facts


def _clean_failure(call: dict[str, Any], words: str, *, under: Path) -> str:
    """Exit 2, one JSON error with the errno in words and a path under `under`."""
    assert "Traceback" not in call["stderr"], call["stderr"]
    doc = call["doc"]
    assert doc is not None, call
    assert call["code"] == 2, (call["args"], call["code"], doc)
    error = doc["error"]
    assert doc["ok"] is False and not error.startswith("internal error"), doc
    assert words in error, (words, error)
    assert str(under) in error, (str(under), error)
    return str(error)


def _no_temp_files(snapshot: dict[str, str]) -> None:
    left = [p for p in snapshot if Path(p).name.startswith(TEMP_PREFIX)]
    assert not left, f"temp files left behind: {left}"


def _unchanged(before: dict[str, str], after: dict[str, str]) -> None:
    changed = [p for p in before if after.get(p) != before[p]]
    assert not changed, f"changed or removed: {changed}"
    # An empty directory made before the disk refused a file is not a torn file.
    added = [p for p in after if p not in before and not p.endswith("/")]
    assert not added, f"added: {added}"


def _no_lock_added(before: dict[str, str], after: dict[str, str]) -> None:
    """A failed operation leaves no lock sidecar behind (a pid line may change)."""
    added = [p for p in after if p.endswith(".lock") and p not in before]
    assert not added, f"lock files left behind: {added}"


def _ok(call: dict[str, Any]) -> None:
    assert call["code"] == 0 and call["doc"]["ok"], (call["args"], call["doc"], call["stderr"])


@pytest.mark.parametrize(("mode", "words"), [("full", NO_SPACE), ("ro", READ_ONLY)])
def test_okstra_home_that_breaks_under_wizard_steps(world: World, mode: str, words: str) -> None:
    facts = _scenario(world, "home_step", mode)
    for call in facts["setup"]:
        _ok(call)
    show, current, answer, back, init, listing, prepare = facts["calls"]
    _ok(show)  # reading needs neither space nor a writable disk
    _ok(listing)
    # The current prompt changes nothing in the state: no lock, no write, so it is
    # shown on a full disk and on a read-only one alike.
    _ok(current)
    for call in (answer, back, init):
        _clean_failure(call, words, under=world.wizards)
    # The run is written in the project; it could not be indexed in OKSTRA_HOME.
    _clean_failure(prepare, words, under=world.home)
    assert prepare["doc"]["runState"] == "complete-unindexed", prepare["doc"]
    # Nothing in OKSTRA_HOME changed: the state file and everything else byte-identical.
    before = {p: h for p, h in facts["before"].items() if not p.endswith(".lock")}
    after = {p: h for p, h in facts["after"].items() if not p.endswith(".lock")}
    _unchanged(before, after)
    _no_lock_added(facts["before"], facts["after"])
    _no_temp_files(facts["after"])
    if mode == "full":
        _ok(facts["recovered"])  # space again: the same step goes through


@pytest.mark.parametrize("mode", ["full", "ro"])
def test_okstra_home_that_breaks_under_prepare(world: World, mode: str) -> None:
    facts = _scenario(world, "home_prepare", mode)
    _ok(facts["first"])
    run = facts["run"]
    error = _clean_failure(run, NO_SPACE if mode == "full" else READ_ONLY, under=world.home)
    doc = run["doc"]
    assert doc["runState"] == "complete-unindexed" and doc["runId"], doc
    assert Path(doc["runDir"], "run-manifest.json").is_file(), doc
    assert "runs.jsonl" in error or "data" in error, error
    before = {p: h for p, h in facts["before"].items() if not p.endswith(".lock")}
    after = {p: h for p, h in facts["after"].items() if not p.endswith(".lock")}
    _unchanged(before, after)
    _no_lock_added(facts["before"], facts["after"])
    _no_temp_files(facts["after"])


def _check_prepare_attempt(world: World, attempt: dict[str, Any], words: str) -> str | None:
    """One prepare into a broken `.okstra`; return the run it left (or None)."""
    run, before, after = attempt["run"], attempt["before"], attempt["after"]
    _no_temp_files(after)
    okstra_dir = world.project / ".okstra"
    for path, digest in before.items():
        name = Path(path).name
        if after.get(path) == digest or name.endswith(".lock"):
            continue
        assert path in after, f"{path} was removed"
        assert name in REWRITTEN + APPENDED, f"{path} changed"
    assert attempt["logsKept"], "a log lost records"
    assert attempt["check"] is None, attempt["check"]  # every file whole, every log untorn
    new_runs = sorted(
        Path(p).name for p in after if p not in before and p.endswith("/") and "/runs/" in p
    )  # fmt: skip
    if run["code"] == 0:
        return None
    _clean_failure(run, words, under=okstra_dir if words else world.home)
    doc = run["doc"]
    if new_runs:
        # Writing had begun: the run it left is named, with its state.
        assert doc.get("runId") in new_runs, (new_runs, doc)
        assert doc.get("runState") in ("incomplete", "complete-unindexed"), doc
        assert Path(doc["runDir"]).name == doc["runId"], doc
        return str(doc["runId"])
    assert "runId" not in doc or doc["runId"] is None or doc["runId"] in new_runs, doc
    return None


@pytest.mark.parametrize("mode", ["full", "inodes"])
def test_okstra_dir_that_fills_at_every_write_of_a_prepare(world: World, mode: str) -> None:
    facts = _scenario(world, "okstra_dir_prepare", mode, 40)
    _ok(facts["first"])
    attempts = facts["attempts"]
    assert attempts and attempts[-1]["run"]["code"] == 0, [
        (a["pages"], a["run"]["code"], (a["run"]["doc"] or {}).get("error")) for a in attempts
    ]
    failed = [a for a in attempts if a["run"]["code"] != 0]
    assert len(failed) >= 3, "the disk never ran out during a prepare"
    left = [_check_prepare_attempt(world, a, NO_SPACE) for a in attempts]
    # At least one prepare failed after it had begun writing and named its run.
    assert any(left), [(a["pages"], a["run"]["doc"]) for a in failed]
    # Space again: the prepare goes through and takes the next free sequence number.
    assert attempts[-1]["run"]["doc"]["runId"] not in left, attempts[-1]["run"]["doc"]


def test_okstra_dir_remounted_read_only(world: World) -> None:
    facts = _scenario(world, "okstra_dir_prepare", "ro", 0)
    _ok(facts["first"])
    (attempt,) = facts["attempts"]
    _clean_failure(attempt["run"], READ_ONLY, under=world.project / ".okstra")
    before = {p: h for p, h in attempt["before"].items() if not p.endswith(".lock")}
    after = {p: h for p, h in attempt["after"].items() if not p.endswith(".lock")}
    _unchanged(before, after)
    assert "runId" not in attempt["run"]["doc"], attempt["run"]["doc"]
