"""A hostile corpus, run from outside: every command against every planted file.

Each case plants one kind of hostile content in a project that was prepared once
(links from `.okstra` to the project's sources, a FIFO or `/dev/zero` as okstra's own
files, a crafted run directory, tampered numbers in state files and manifests), then
runs the same battery of `okstra` commands (prepare, the wizard protocol, runs, resume,
report, status) as the installed command in a subprocess. For every call:

* it ends within the timeout (a FIFO or a device never hangs it);
* it exits 0, 1 or 2 — never 70 (an internal error) — and prints no traceback;
* no file outside `.okstra` and `OKSTRA_HOME` changed, and nothing a crafted run file
  asked for ran (no marker file appears).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.reliability.reliability_support import (
    World,
    make_world,
    make_world_at,
    okstra,
    prepare_argv,
)

TASK = ".okstra/tasks/grp/tsk"
SOURCE = {"src/app.py": b"print('the app')\n", "src/config.py": b"DEBUG = False\n"}
MARKER = "PWNED"
TIMEOUT = 60  # a hang is infinite: any bound finds it; generous for a loaded machine


def _outside(world: World) -> dict[str, str]:
    """Every file of the project outside `.okstra`, and of the victim folder: sha256."""
    out: dict[str, str] = {}
    for root in (world.project, world.root / "victim"):
        for dirpath, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d != ".okstra"]
            for name in files:
                path = Path(dirpath, name)
                data = b"<link>" if path.is_symlink() else path.read_bytes()
                out[str(path)] = hashlib.sha256(data).hexdigest()
    return out


def _replace(path: Path, make: Callable[[Path], None]) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
    make(path)


def _link(target: str) -> Callable[[Path], None]:
    return lambda path: path.symlink_to(target)


def _edit_json(path: Path, change: Callable[[dict[str, object]], None]) -> None:
    raw = json.loads(path.read_bytes())
    change(raw)
    path.write_text(json.dumps(raw))


def _crafted_resume(run: Path, world: World) -> None:
    def change(raw: dict[str, object]) -> None:
        for lead in raw.get("participants", []):  # type: ignore[attr-defined]
            lead["resumeArgv"] = ["/bin/sh", "-c", f"touch {world.root / MARKER}"]
            lead["cwd"] = "/"
            lead["env"] = {"LD_PRELOAD": str(world.root / "evil.so")}
        raw["resumeArgv"] = ["/bin/sh", "-c", f"touch {world.root / MARKER}"]

    _edit_json(run / "resume.json", change)


def _lock_links(w: World, run: Path, s: Path) -> None:
    _replace(w.project / ".okstra/project.json.lock", _link("../src/app.py"))
    _replace(w.project / f"{TASK}/runs.lock", _link("../../../../src/app.py"))
    _replace(w.project / f"{TASK}/timeline.jsonl.lock", _link("../../../../src/app.py"))
    _replace(run / "resume.json.lock", _link(str(w.project / "src/app.py")))


def _manifest_specials(w: World, run: Path, s: Path) -> None:
    _replace(w.project / f"{TASK}/task-manifest.json", os.mkfifo)
    _replace(run / "run-manifest.json", _link("/dev/zero"))
    _replace(run / "resume.json", _link("../../../../../../src/config.py"))


def _crafted_run_files(w: World, run: Path, s: Path) -> None:
    _crafted_resume(run, w)
    _edit_json(
        run / "run-manifest.json",
        lambda raw: raw.update(
            {"participants": [{"role": "x" * 10_000}] * 1000, "schemaVersion": 2**64}
        ),
    )
    _edit_json(w.project / f"{TASK}/task-manifest.json", lambda raw: raw.update(
        {"roleExecutionIndex": [{"runId": "../../../../etc", "n": 10**30}]}))  # fmt: skip


def _tampered_numbers(w: World, run: Path, s: Path) -> None:
    _edit_json(s, lambda raw: raw.update(
        {"roleCounts": {"analyser": 100_000_000}, "revision": 2**64 - 1,
         "updated_at": "0001-01-01T00:00:00+00:00"}))  # fmt: skip


def _above_profile_max(w: World, run: Path, s: Path) -> None:
    _edit_json(s, lambda raw: raw.update({"roleCounts": {"analyser": 10}}))


CASES: dict[str, Callable[[World, Path, Path], None]] = {
    "lock-links": _lock_links,
    "log-links": lambda w, run, s: _replace(
        w.project / f"{TASK}/timeline.jsonl", _link("../../../../src/config.py")
    ),
    "project-json-dev-zero": lambda w, run, s: _replace(
        w.project / ".okstra/project.json", _link("/dev/zero")
    ),
    "project-json-fifo": lambda w, run, s: _replace(w.project / ".okstra/project.json", os.mkfifo),
    "manifest-fifo-and-links": _manifest_specials,
    "runs-dir-link": lambda w, run, s: _replace(
        w.project / f"{TASK}/runs", _link(str(w.root / "victim"))
    ),
    "okstra-dir-link": lambda w, run, s: _replace(
        w.project / ".okstra", _link(str(w.root / "victim"))
    ),
    "crafted-run-files": _crafted_run_files,
    "tampered-state-numbers": _tampered_numbers,
    "state-count-above-profile-max": _above_profile_max,
    "state-fifo": lambda w, run, s: _replace(s, os.mkfifo),
    "state-dev-zero": lambda w, run, s: _replace(s, _link("/dev/zero")),
    "state-link-to-source": lambda w, run, s: _replace(s, _link(str(w.project / "src/app.py"))),
    "brief-dev-zero": lambda w, run, s: _replace(w.project / "brief.md", _link("/dev/zero")),
}


def _battery(world: World, run: Path, state: Path) -> list[list[str]]:
    return [
        [*prepare_argv(world.project), "--launch=none"],
        [*prepare_argv(world.project), "--dry-run"],
        ["prepare", "--state", str(state), "--launch=none", "--again"],
        ["wizard", "list"],
        ["wizard", "show", "--state", str(state)],
        ["wizard", "step", "--state", str(state), "--no-submit"],
        ["wizard", "step", "--state", str(state), "--answer=1"],
        ["wizard", "answers", "--state", str(state)],
        ["wizard", "outcome", "--state", str(state)],
        ["runs", "--json"],
        ["resume", str(run)],
        ["resume", str(run), "--exec"],
        ["report", "roles", str(run), "--json"],
        ["status", str(run), "--json"],
    ]


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """One prepared project and a half-answered wizard, made once per test process.

    Every case starts from a byte-for-byte copy of it, restored at the same path (the
    run files hold absolute paths), so the setup's dozen `okstra` calls run once."""
    base = tmp_path_factory.mktemp("corpus")
    world = make_world(base)
    for rel, data in SOURCE.items():
        (world.project / rel).parent.mkdir(parents=True, exist_ok=True)
        (world.project / rel).write_bytes(data)
    (world.root / "victim").mkdir()
    (world.root / "victim" / "keep.txt").write_text("keep\n")
    first = okstra(world, *prepare_argv(world.project), "--launch=none", timeout=TIMEOUT)
    assert first.code == 0, first.doc
    run = Path(first.doc["runDir"])
    state = world.wizards / "w.json"
    init = okstra(world, "wizard", "init", "--state", str(state), "--project-root",
                  str(world.project), "--host", "terminal", timeout=TIMEOUT)  # fmt: skip
    assert init.code == 0, init.doc
    for _ in range(4):
        shown = okstra(world, "wizard", "step", "--state", str(state), "--no-submit")
        prompt = shown.doc["next"]
        answer = {"task_group": "grp", "task_id": "tsk"}.get(prompt["id"])
        if answer is None:
            answer = prompt.get("default") or next(
                (o["value"] for o in prompt.get("options") or [] if not o.get("disabledReason")),
                "x",
            )
        okstra(world, "wizard", "step", "--state", str(state), f"--answer={answer}")
    shutil.copytree(world.root, base / "template", symlinks=True)
    return world.root, run, state


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_corpus_from_outside(prepared: tuple[Path, Path, Path], case: str) -> None:
    root, run, state = prepared
    shutil.rmtree(root)  # the last case's leftovers (links are removed, never followed)
    shutil.copytree(root.parent / "template", root, symlinks=True)
    world = make_world_at(root)

    CASES[case](world, run, state)
    before = _outside(world)
    for argv in _battery(world, run, state):
        result = okstra(world, *argv, timeout=TIMEOUT)  # raises on a hang
        where = (case, argv[:3])
        assert b"Traceback" not in result.stderr + result.stdout, (where, result.stderr[-2000:])
        assert result.code in (0, 1, 2), (where, result.code, result.doc)
        if result.doc is not None and result.code:
            assert not str(result.doc.get("error", "")).startswith("internal error"), where
        assert _outside(world) == before, (where, "a file outside okstra's own changed")
        assert not (world.root / MARKER).exists(), (where, "a crafted run file was executed")
