"""Crash safety of the real writers: SIGKILL at random moments.

* `okstra wizard step` (the installed command, v2 and v1 sources) killed at a random
  point of its run: the state file is byte-identical to before, or a valid state one
  revision newer — never torn, never unparseable; a v1 source never changes.
* An engine writer looping submit/back as fast as it can, journaling the sha256 of
  every state it saved, killed at random: the file on disk is always a journaled state
  or the one state saved after the last journal line (old or new content).
* `okstra prepare --launch none` killed at random: every manifest under `.okstra/`,
  the central `runs.jsonl` and the state file parse and validate; the task manifest's
  `roleExecutionIndex` only ever grows by appending; a later prepare still works and
  the half-written runs do not break the wizard's task picker.
* `okstra prepare --answers` killed at random: the new setup file is absent or whole
  (confirmed, every answer) and the run files parse as above.

After every kill, stray `.okstra-tmp-*` files may remain, but are never read as state
(not listed by `okstra wizard list`, never opened as a wizard or manifest).

Scale with OKSTRA_CRASH_RUNS (see docs/reliability.md).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from okstra_core.paths import user_dirs
from okstra_core.records import to_data
from okstra_core.session import list_wizards
from tests.reliability.reliability_support import (
    LEGACY_FIXTURES,
    REPO,
    World,
    answer_for_json,
    check_project_files,
    jsonl_records,
    load_state,
    make_world,
    new_wizard,
    okstra,
    popen_okstra,
    sha256,
    temp_files,
)

RUNS = int(os.environ.get("OKSTRA_CRASH_RUNS", "8"))
SEED = int(os.environ.get("OKSTRA_SEED", "20240611"))

pytestmark = pytest.mark.slow


def _kill_after(proc: subprocess.Popen[bytes], delay: float) -> bool:
    """SIGKILL `proc` after `delay` seconds; True when it was still running."""
    deadline = time.monotonic() + delay
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        time.sleep(0.002)
    alive = proc.poll() is None
    if alive:
        proc.send_signal(signal.SIGKILL)
    proc.communicate()
    return alive


def _wait_for(proc: subprocess.Popen[bytes], signal_seen: Callable[[], bool]) -> bool:
    """Wait until okstra gives `signal_seen` (True) or `proc` ends first (False)."""
    while proc.poll() is None:
        if signal_seen():
            return True
        time.sleep(0.0005)
    return signal_seen()


def _file_id(path: Path | None) -> tuple[int, int, int] | None:
    """What changes when a file is replaced by rename (or created): inode, mtime, size."""
    if path is None:
        return None
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def _lock_holder(directory: Path) -> set[int]:
    """The pids written in the lock sidecars of `directory` (their first lines)."""
    pids = set()
    for lock in directory.glob("*.lock"):
        try:
            first = lock.read_bytes().partition(b"\n")[0]
        except OSError:
            continue
        if first.isdigit():
            pids.add(int(first))
    return pids


def _v1_source(world: World) -> Path:
    """A legacy fixture, pointed at this world's project (its bytes are then frozen)."""
    raw = json.loads((LEGACY_FIXTURES / "rd_spawn_workers_models.json").read_text())
    raw["project_root"] = str(world.project)
    raw["brief_path"] = str(world.project / "brief.md")
    raw["host_runtime"] = "terminal"
    raw["confirmed"] = None
    raw["answered"] = [a for a in raw["answered"] if a != "confirm"]
    path = world.wizards / "legacy.json"
    path.write_bytes(orjson.dumps(raw, option=orjson.OPT_INDENT_2))
    return path


def _companions(source: Path) -> list[Path]:
    return sorted(source.parent.glob(f"{source.name}.v2.*.json"))


def _written(world: World, source: Path, legacy: bool) -> Path | None:
    if not legacy:
        return source
    found = _companions(source)
    assert len(found) <= 1, found
    return found[0] if found else None


def _no_temp_file_is_state(world: World) -> None:
    listed = [s.path for s in list_wizards(world.environment)]
    assert not any(".okstra-tmp-" in str(p) for p in listed), listed


@pytest.mark.parametrize("source_kind", ["v2", "v1"])
def test_sigkill_of_okstra_wizard_step(tmp_path: Path, source_kind: str) -> None:
    world = make_world(tmp_path)
    legacy = source_kind == "v1"
    if legacy:
        source = _v1_source(world)
    else:
        source = world.wizards / "w.json"
        init = okstra(
            world, "wizard", "init", "--state", str(source), "--project-root",
            str(world.project), "--host", "terminal",
        )  # fmt: skip
        assert init.code == 0 and init.doc["ok"], init
    v1_bytes = source.read_bytes() if legacy else b""
    rng = random.Random(SEED)

    # Calibrate: the wall time of an unkilled step bounds the early kills.
    started = time.monotonic()
    shown = okstra(world, "wizard", "step", "--state", str(source), "--no-submit")
    assert shown.code == 0 and shown.doc["ok"], shown
    span = max(time.monotonic() - started, 0.05) * 1.3

    # Where each kill lands, in turn (so every kind is covered at any OKSTRA_CRASH_RUNS):
    # anywhere in the run (a delay after the start); once the step holds the state
    # file's lock (its pid is in the sidecar: the save comes next), a few milliseconds
    # later; and the moment the state file was replaced (the save is on disk). The last
    # two wait on okstra's own signals, not on how fast the machine is.
    modes = ("anywhere", "locked", "saved")
    outcomes = {"unchanged": 0, "new": 0, "finished": 0}
    for run in range(RUNS):
        target = _written(world, source, legacy)
        old_bytes = target.read_bytes() if target else None
        old_id = _file_id(target)
        old = load_state(world, source)
        old_rev = old.state.revision if target else 0
        prompt = to_data(old.prompt())
        if prompt["kind"] == "done":
            args = ["--rewind", "task_type"]
        elif prompt["id"] == "confirm" and rng.random() < 0.5:
            args = ["--back"]
        else:
            args = ["--answer", answer_for_json(prompt)]
        proc = popen_okstra(world, "wizard", "step", "--state", str(source), *args)
        mode = modes[run % len(modes)]
        if mode == "anywhere":
            killed = _kill_after(proc, rng.uniform(0.0, span))
        elif mode == "locked":
            _wait_for(proc, lambda pid=proc.pid: pid in _lock_holder(world.wizards))
            killed = _kill_after(proc, rng.uniform(0.0, 0.005))
        else:
            saved = _wait_for(
                proc, lambda was=old_id: _file_id(_written(world, source, legacy)) != was
            )  # fmt: skip
            killed = _kill_after(proc, 0.0)
            # Once the new file is in place, a kill can no longer take it back.
            assert not saved or _file_id(_written(world, source, legacy)) != old_id

        if legacy:
            assert source.read_bytes() == v1_bytes, "the v1 source was modified"
        target = _written(world, source, legacy)
        new_bytes = target.read_bytes() if target else None
        now = load_state(world, source)  # parses and validates: never torn
        if new_bytes == old_bytes:
            outcomes["unchanged"] += 1
        else:
            assert now.state.revision == old_rev + 1, (old_rev, now.state.revision)
            outcomes["new" if killed else "finished"] += 1
        if not killed:
            assert proc.returncode == 0, proc.returncode
        _no_temp_file_is_state(world)

    assert outcomes["new"] + outcomes["finished"] > 0, outcomes  # writes did happen
    listed = okstra(world, "wizard", "list")
    assert listed.code == 0, listed
    assert ".okstra-tmp-" not in listed.stdout.decode()
    print(f"wizard step kills ({source_kind}): {outcomes}")


# An engine writer: submit/back forever, journaling (revision, sha256) of each saved
# state *after* the save returns. A kill between the save and its journal line leaves
# a file one revision past the journal — the only state allowed to be unjournaled.
WRITER = r"""
import hashlib, json, os, sys
from pathlib import Path
from okstra_core.environment import Environment
from okstra_core.errors import AnswerRefused
from okstra_core.session import Wizard
sys.path.insert(0, sys.argv[3])
from tests.reliability.reliability_support import answer_for

source, journal = Path(sys.argv[1]), Path(sys.argv[2])
wizard = Wizard.open(source, environment=Environment.real())
fd = os.open(journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
def note():
    digest = hashlib.sha256(wizard.path.read_bytes()).hexdigest()
    os.write(fd, (json.dumps([wizard.state.revision, digest]) + "\n").encode())
note()
print("ready", flush=True)
while True:
    prompt = wizard.prompt()
    if prompt.kind == "done" or prompt.id == "confirm":
        wizard.back()
    else:
        try:
            wizard.submit(answer_for(prompt))
        except AnswerRefused:
            wizard.back()
    note()
    print("saved", flush=True)
"""


@pytest.mark.parametrize("source_kind", ["v2", "v1"])
def test_sigkill_of_an_engine_writer_leaves_old_or_new(tmp_path: Path, source_kind: str) -> None:
    world = make_world(tmp_path)
    legacy = source_kind == "v1"
    if legacy:
        source = _v1_source(world)
        load_state(world, source).refresh()  # create the companion
    else:
        source = world.wizards / "w.json"
        new_wizard(world, source, confirm=False)
    v1_bytes = source.read_bytes()
    journal = tmp_path / "journal.jsonl"
    rng = random.Random(SEED + 1)
    last_seen = 0
    unjournaled = 0
    for _ in range(RUNS):
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(source), str(journal), str(REPO)],
            env=world.env,
            stdout=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            cwd=REPO,
        )
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == b"ready"
        # Kill only once the writer has saved (and journaled) a few states: every run
        # writes, however slow the machine. Then a random moment of the next saves.
        for _ in range(rng.randint(1, 4)):
            assert proc.stdout.readline().strip() == b"saved"
        time.sleep(rng.uniform(0.0, 0.05))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()

        if legacy:
            assert source.read_bytes() == v1_bytes, "the v1 source was modified"
        written = _written(world, source, legacy)
        assert written is not None
        data = written.read_bytes()
        state = load_state(world, source).state  # parses and validates
        entries = [tuple(e) for e in jsonl_records_tolerant(journal)]
        seen = {sha for _, sha in entries}
        top = max(rev for rev, _ in entries)
        if sha256(data) not in seen:
            # Saved after the last journal line: exactly the next revision.
            assert state.revision == top + 1, (state.revision, top)
            unjournaled += 1
        assert state.revision >= last_seen
        last_seen = state.revision
        _no_temp_file_is_state(world)
    assert last_seen > RUNS, "the writer barely wrote: the test proved little"
    print(
        f"engine writer kills ({source_kind}): revisions {last_seen}, "
        f"killed between save and journal {unjournaled}, "
        f"stray temp files {len(temp_files(world.wizards))}"
    )


def jsonl_records_tolerant(path: Path) -> list[list[object]]:
    # The journal itself is not atomic (a kill can tear its last line): skip that line.
    out = []
    for line in path.read_bytes().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def _await_writes(proc: subprocess.Popen[bytes]) -> float:
    """Block until prepare reports its first write step (OKSTRA_PROGRESS=1 on stderr)."""
    assert proc.stderr is not None
    for line in proc.stderr:
        if b"allocating the run sequence" in line:
            break
    return time.monotonic()


def test_sigkill_of_okstra_prepare(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    world.extra_env["OKSTRA_PROGRESS"] = "1"
    state = world.wizards / "w.json"
    new_wizard(world, state)
    state_bytes = state.read_bytes()
    runs_index = user_dirs(world.env).runs_index
    rng = random.Random(SEED + 2)

    # Calibrate: the time from "allocating the run sequence" (the first write) to exit.
    proc = popen_okstra(world, "prepare", "--state", str(state), "--launch", "none")
    writes_from = _await_writes(proc)
    out, _ = proc.communicate()
    assert proc.returncode == 0 and orjson.loads(out)["ok"], out
    span = max(time.monotonic() - writes_from, 0.02) * 1.2

    indexes = check_project_files(world.project)["index"]
    outcomes = {"killed": 0, "finished": 0}
    for _ in range(RUNS):
        # The same setup again and again: each prepare is asked for (`--again`).
        proc = popen_okstra(world, "prepare", "--state", str(state), "--launch", "none", "--again")
        if rng.random() < 0.25:
            killed = _kill_after(proc, rng.uniform(0.0, 0.4))  # anywhere, startup included
        else:
            _await_writes(proc)  # aim at the write phase
            killed = _kill_after(proc, rng.uniform(0.0, span))
        outcomes["killed" if killed else "finished"] += 1
        if not killed:
            assert proc.returncode == 0, proc.returncode
        summary = check_project_files(world.project)
        for task, index in summary["index"].items():
            before = indexes.get(task, [])
            assert index[: len(before)] == before, "roleExecutionIndex was rewritten"
        indexes = summary["index"]
        jsonl_records(runs_index)
        assert state.read_bytes() == state_bytes, "prepare changed the wizard state"

    final = okstra(world, "prepare", "--state", str(state), "--launch", "none", "--again")
    assert final.code == 0 and final.doc["ok"], final
    runs_dir = Path(final.doc["runDir"]).parent
    seqs = sorted(int(p.name.rsplit("-", 1)[1]) for p in runs_dir.iterdir() if p.is_dir())
    assert int(final.doc["runId"].rsplit("-", 1)[1]) == seqs[-1]
    summary = check_project_files(world.project)
    assert final.doc["runId"] in summary["runs"]
    # Half-written runs must not break the readers of the project's tasks.
    fresh = okstra(
        world, "wizard", "init", "--state", str(world.wizards / "again.json"),
        "--project-root", str(world.project), "--host", "terminal",
    )  # fmt: skip
    assert fresh.code == 0 and fresh.doc["ok"], fresh
    assert "grp/tsk" in {o["value"] for o in fresh.doc["next"]["options"]}
    print(
        f"prepare kills: {outcomes}, complete runs {len(summary['runs'])} of {len(seqs)} "
        f"run dirs, stray temp files {len(temp_files(world.project / '.okstra'))}"
    )


def test_sigkill_of_okstra_prepare_answers(tmp_path: Path) -> None:
    """`prepare --answers` killed at random: the new setup is absent or whole (confirmed,
    every answer), the run files are old or new, never torn."""
    world = make_world(tmp_path)
    world.extra_env["OKSTRA_PROGRESS"] = "1"
    source = world.wizards / "source.json"
    new_wizard(world, source)
    answers = tmp_path / "answers.json"
    shown = okstra(world, "wizard", "answers", "--state", str(source))
    assert shown.code == 0, shown
    answers.write_bytes(orjson.dumps(shown.doc["answers"]))
    expected = [a["answer"] for a in shown.doc["answers"]]
    args = ["--answers", str(answers), "--project-root", str(world.project), "--host", "terminal"]
    args += ["--task-type", "requirements-discovery"]  # answered up front, as in the source

    def saving(proc: subprocess.Popen[bytes]) -> float:
        assert proc.stderr is not None
        for line in proc.stderr:  # the first write: the setup's, then the run's
            if b"saving the setup" in line:
                break
        return time.monotonic()

    # Calibrate: the time from the first write to exit.
    proc = popen_okstra(world, "prepare", *args, "--state", "calibrate", "--launch", "none")
    writes_from = saving(proc)
    out, _ = proc.communicate()
    assert proc.returncode == 0 and orjson.loads(out)["ok"], out
    span = max(time.monotonic() - writes_from, 0.02) * 1.2
    shutil.rmtree(world.project / ".okstra")
    rng = random.Random(SEED + 3)
    outcomes = {"killed": 0, "finished": 0}
    for index in range(RUNS):
        setup = world.wizards / f"scripted-{index}.json"
        proc = popen_okstra(world, "prepare", *args, "--state", str(setup), "--launch", "none")
        if rng.random() < 0.25:
            killed = _kill_after(proc, rng.uniform(0.0, 0.4))  # anywhere, startup included
        else:
            saving(proc)
            killed = _kill_after(proc, rng.uniform(0.0, span))
        outcomes["killed" if killed else "finished"] += 1
        if not killed:
            assert proc.returncode == 0, proc.returncode
        if setup.exists():
            wizard = load_state(world, setup)
            assert wizard.state.confirmed is True
            assert [a.answer for a in wizard.answers()] == expected
        else:
            assert killed
        check_project_files(world.project)
        jsonl_records(user_dirs(world.env).runs_index)
        jsonl_records(setup.with_suffix(".runs.jsonl"))
        # The next replay names the same new task: start it from a project without it.
        shutil.rmtree(world.project / ".okstra", ignore_errors=True)
    print(f"prepare --answers kills: {outcomes}")
