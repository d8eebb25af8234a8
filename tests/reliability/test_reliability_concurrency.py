"""Concurrency through the installed command.

* Two processes stepping one state file with `okstra wizard step --step ID --answer A`
  (the protocol a script uses): every call succeeds, fails fast with exit 2 and
  "state file is in use (pid N)", or — when the other process already answered that
  step — is refused with exit 0 and the real current prompt. The final state holds
  exactly the successful answers, once each, and `revision` grew by exactly their
  number: no update was lost or doubled.
* While a writer holds the lock, the read-only commands still answer at once and a
  step is refused naming the holder's pid, changing nothing.
* Concurrent prepares of one task get distinct run sequences, and the task manifest,
  timeline and central index keep every run (appended, none lost).
* Concurrent prepares of different tasks of one project keep every task in
  `.okstra/project.json`.

Scale with OKSTRA_CONCURRENCY_STEPS and OKSTRA_PREPARE_PROCS (docs/reliability.md).
"""

from __future__ import annotations

import os
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest

from okstra_core.paths import user_dirs
from tests.reliability.reliability_support import (
    World,
    answer_for_json,
    check_project_files,
    jsonl_records,
    load_state,
    make_world,
    new_wizard,
    okstra,
    popen_okstra,
    prepare_argv,
)

STEPS = int(os.environ.get("OKSTRA_CONCURRENCY_STEPS", "10"))
PROCS = int(os.environ.get("OKSTRA_PREPARE_PROCS", "4"))

pytestmark = pytest.mark.slow

IN_USE = "state file is in use (pid "


def _racer(world: World, state: Path, log: list[dict[str, Any]], stop: threading.Event) -> None:
    """Step `state` until the confirm prompt, recording each call and its outcome."""
    prompt: dict[str, Any] | None = None
    for _ in range(200):
        if stop.is_set():
            return
        if prompt is None:
            shown = okstra(world, "wizard", "show", "--state", str(state))
            assert shown.code == 0, shown  # read-only: never refused for the lock
            prompt = shown.doc["prompt"]
        if prompt["id"] == "confirm" or prompt["kind"] == "done":
            return
        answer = answer_for_json(prompt)
        run = okstra(
            world, "wizard", "step", "--state", str(state), "--step", prompt["id"],
            "--answer", answer,
        )  # fmt: skip
        entry: dict[str, Any] = {"step": prompt["id"], "answer": answer, "code": run.code}
        assert b"Traceback" not in run.stderr, run.stderr
        if run.code == 0 and run.doc["ok"]:
            entry["kind"] = "ok"
            prompt = run.doc["next"]
        elif run.code == 2 and IN_USE in run.doc["error"]:
            entry["kind"] = "busy"
            prompt = None  # ask again: the other process may have moved on
        elif run.code == 0 and run.doc["ok"] is False and "current" in run.doc:
            entry["kind"] = "stale"
            entry["current"] = run.doc["current"]["id"]
            entry["error"] = run.doc["error"]
            prompt = run.doc["current"]
        else:
            entry["kind"] = "unexpected"
            entry["doc"] = run.doc
        log.append(entry)


def test_two_processes_stepping_one_state_file_lose_nothing(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    totals: Counter[str] = Counter()
    rounds = 0
    while totals["ok"] < STEPS:
        rounds += 1
        state = world.wizards / f"race-{rounds}.json"
        init = okstra(
            world, "wizard", "init", "--state", str(state), "--project-root",
            str(world.project), "--host", "terminal",
        )  # fmt: skip
        assert init.code == 0, init
        before = load_state(world, state).state.revision
        logs: list[list[dict[str, Any]]] = [[], []]
        stop = threading.Event()
        threads = [threading.Thread(target=_racer, args=(world, state, log, stop)) for log in logs]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
        stop.set()
        calls = [e for log in logs for e in log]
        kinds = Counter(e["kind"] for e in calls)
        assert kinds["unexpected"] == 0, [e for e in calls if e["kind"] == "unexpected"]
        wizard = load_state(world, state)
        history = [(h.step_id, h.answer) for h in wizard.history()]
        successes = [(e["step"], e["answer"]) for e in calls if e["kind"] == "ok"]
        # Each success is in the file exactly once, and nothing else is.
        assert sorted(successes) == sorted(history), (successes, history)
        assert wizard.state.revision - before == len(successes), (kinds, wizard.state.revision)
        # A stale refusal is only ever for a step the other process had answered.
        answered = {step for step, _ in history}
        for e in calls:
            if e["kind"] == "stale":
                assert e["step"] in answered and e["current"] != e["step"], e
        assert wizard.prompt().id == "confirm"
        totals.update(kinds)
    print(f"CLI race: {rounds} rounds, {dict(totals)}")


def test_a_held_lock_refuses_steps_but_not_readers(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    state = world.wizards / "held.json"
    wizard = new_wizard(world, state, confirm=False)
    before = state.read_bytes()
    with wizard.hold():
        step = okstra(world, "wizard", "step", "--state", str(state), "--answer", "confirm")
        assert step.code == 2 and step.doc["ok"] is False, step
        assert f"state file is in use (pid {os.getpid()})" in step.doc["error"], step.doc
        for command in ("show", "answers"):
            started = time.monotonic()
            read = okstra(world, "wizard", command, "--state", str(state))
            assert read.code == 0 and read.doc["ok"], read
            assert time.monotonic() - started < 30  # did not wait for the lock
        listed = okstra(world, "wizard", "list")
        assert listed.code == 0 and str(state) in listed.stdout.decode()
    assert state.read_bytes() == before
    after = okstra(world, "wizard", "step", "--state", str(state), "--answer", "confirm")
    assert after.code == 0 and after.doc["ok"], after


def _prepare_all(world: World, argvs: list[list[str]]) -> list[dict[str, Any]]:
    procs = [popen_okstra(world, *argv, "--launch", "none") for argv in argvs]
    docs = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert b"Traceback" not in err, err
        assert proc.returncode == 0, out
        docs.append(orjson.loads(out))
    return docs


def test_concurrent_prepares_of_one_task_get_distinct_sequences(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    docs = _prepare_all(world, [prepare_argv(world.project) for _ in range(PROCS)])
    run_ids = [d["runId"] for d in docs]
    assert len(set(run_ids)) == PROCS, run_ids
    assert sorted(int(r.rsplit("-", 1)[1]) for r in run_ids) == list(range(1, PROCS + 1))
    summary = check_project_files(world.project)
    assert sorted(summary["runs"]) == sorted(run_ids)
    (index,) = summary["index"].values()
    per_run = Counter(e["runId"] for e in index)
    sizes = {len(d["team"]) for d in docs}
    assert set(per_run) == set(run_ids) and set(per_run.values()) == sizes, per_run
    task_root = Path(docs[0]["runDir"]).parent.parent
    timeline = jsonl_records(task_root / "timeline.jsonl")
    assert sorted(e["runId"] for e in timeline) == sorted(run_ids)
    central = jsonl_records(user_dirs(world.env).runs_index)
    assert sorted(e["runId"] for e in central) == sorted(run_ids)


def test_concurrent_prepares_of_different_tasks_keep_every_task(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    argvs = [prepare_argv(world.project, task_id=f"t{i}") for i in range(PROCS)]
    docs = _prepare_all(world, argvs)
    project_json = orjson.loads((world.project / ".okstra" / "project.json").read_bytes())
    expected = sorted(f"grp/t{i}" for i in range(PROCS))
    assert sorted(project_json["tasks"]) == expected, (project_json["tasks"], docs[0]["runId"])
