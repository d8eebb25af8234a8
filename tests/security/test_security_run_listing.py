"""Run files are data: a damaged run is a row, names are names, output is inert.

A hostile project (`hostile_runs.py`) holds one real run and, next to it, runs planted
the way a cloned repository could carry them. Against it the installed `okstra`:
`runs` and `status` never exit 70 and list every planted run as a row saying
`damaged: <why>` or `incomplete`; no ESC byte reaches human output; the JSON is exact;
a top-level directory named like a run id is never taken for it; nothing is written
outside `.okstra`; `runs --prune` removes only old incomplete run directories.
"""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.conftest import okstra_cmd
from tests.security.hostile_runs import (
    CLEAN,
    ESC_NAME,
    NASTY,
    OSC52,
    RUN,
    STATES,
    base_manifest,
    okstra,
    plant,
    plant_all,
    prepared_project,
    tree,
)


@pytest.fixture
def hostile(tmp_path: Path) -> dict[str, Any]:
    project, env = prepared_project(tmp_path)
    planted = plant_all(project)
    return {"project": project, "env": env, "planted": planted, "tmp": tmp_path}


def outside(world: dict[str, Any]) -> dict[str, str]:
    """Everything under the test's directory but the project's `.okstra`."""
    return tree(world["tmp"], skip=".okstra")


def rows_by_dir(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["runDir"]: row for row in doc["runs"]}


def test_every_planted_run_is_a_row_and_the_output_is_inert(hostile: dict[str, Any]) -> None:
    project, env, planted = hostile["project"], hostile["env"], hostile["planted"]
    before = outside(hostile)
    for cwd in (project, project / ".okstra"):
        proc = okstra(["runs"], cwd, env)
        assert proc.returncode == 0, proc.stderr.decode()
        assert b"\x1b" not in proc.stdout + proc.stderr and b"\x07" not in proc.stdout
        text = proc.stdout.decode()
        assert text.count("damaged:") >= len([s for s in STATES.values() if s == "damaged"])
        assert text.count("incomplete") >= 3 and RUN in text
        assert "\\x1b]52;c;" in text  # the control sequence is shown, as an escape
    proc = okstra(["runs", "--json"], project, env)
    assert proc.returncode == 0, proc.stderr.decode()
    rows = rows_by_dir(orjson.loads(proc.stdout))
    real = project / ".okstra/tasks/perf/widget/runs" / RUN
    assert rows[str(real)]["runState"] == "ok" and rows[str(real)]["leadStatus"] == "prepared"
    for name, state in STATES.items():
        row = rows[str(planted[name])]
        assert row["runState"] == state, (name, row)
        assert row["runId"] == name  # exact: JSON escapes, nothing more
        assert row["problem"], (name, row)
        assert (row["leadStatus"] == "incomplete") == (state == "incomplete")
    for name in CLEAN:
        assert rows[str(planted[name])]["runState"] in ("ok", "damaged"), name
    nasty = rows[str(planted["nasty-fields-001"])]
    if nasty["lead"] is not None and nasty["lead"]["state"] != "damaged":
        assert nasty["lead"]["detail"] == NASTY  # exact in JSON
    assert rows[str(planted[f"escgroup-{RUN}"])]["taskKey"].startswith("\x1b[31mred/task")
    assert "huge-pid" not in " ".join(r["problem"] or "" for r in rows.values() if r["lead"])
    # The top-level decoy is no run of the project.
    assert not any(Path(r["runDir"]).parent == project for r in rows.values())
    assert outside(hostile) == before


@pytest.mark.slow
def test_status_of_each_planted_run_is_inert_and_never_70(hostile: dict[str, Any]) -> None:
    project, env, planted = hostile["project"], hostile["env"], hostile["planted"]
    before = outside(hostile)
    for name, where in planted.items():
        for args in (["status", str(where)], ["status", str(where), "--json"]):
            proc = okstra(args, project, env)
            assert proc.returncode in (0, 2), (name, proc.stderr.decode())
            assert b"\x1b" not in proc.stderr, name
            if "--json" in args:
                doc = orjson.loads(proc.stdout)
                if proc.returncode == 0:
                    assert doc["runDir"] == str(where) and doc["runId"] == name
            else:
                assert b"\x1b" not in proc.stdout and b"\x07" not in proc.stdout, name
                if name in STATES and proc.returncode == 0:
                    assert f"lead     {STATES[name]}" in proc.stdout.decode(), name
    # A lead's last lines from the timeline, full of control sequences: inert.
    where = planted["nasty-fields-001"]
    timeline = where.parent.parent / "timeline.jsonl"
    event = {"event": "lead-exited", "runId": where.name, "lastLines": [NASTY, "ok", 5, "x" * 5000]}
    timeline.write_bytes(orjson.dumps(event) + b"\n")
    proc = okstra(["status", "hostile/planted/nasty-fields-001"], project, env)
    assert proc.returncode == 0 and b"\x1b" not in proc.stdout
    if b"lead     exited" in proc.stdout:
        assert b"\\x1b]52;c;" in proc.stdout and b"  | ok" in proc.stdout
    assert outside(hostile) == before


@pytest.mark.slow
def test_names_are_names_and_paths_are_paths(hostile: dict[str, Any]) -> None:
    project, env = hostile["project"], hostile["env"]
    before = outside(hostile)
    real = project / ".okstra/tasks/perf/widget/runs" / RUN
    for cwd in (project, project / "requirements-discovery-001", project / ".okstra"):
        proc = okstra(["status", RUN, "--json"], cwd, env)
        assert proc.returncode == 0, proc.stdout
        assert orjson.loads(proc.stdout)["runDir"] == str(real)
    for arg in (f"./{RUN}", f"{RUN}/run-manifest.json", str(project / RUN), "../proj/" + RUN):
        for command in (["status", arg], ["report", "roles", arg], ["resume", arg, "--wait", "0"]):
            proc = okstra(command, project, env)
            assert proc.returncode == 2, (command, proc.stdout, proc.stderr)
            assert b"not a run" in proc.stdout + proc.stderr, (command, proc.stdout, proc.stderr)
    # A path into the runs is a path: it must resolve there.
    for arg in (
        str(real),
        str(real / "run-manifest.json"),
        f".okstra/tasks/perf/widget/runs/{RUN}",
    ):
        proc = okstra(["status", arg, "--json"], project, env)
        assert proc.returncode == 0 and orjson.loads(proc.stdout)["runDir"] == str(real)
    assert not (hostile["tmp"] / "timeline.jsonl").exists()
    assert not (project / "timeline.jsonl").exists()
    assert outside(hostile) == before


def test_report_roles_cells_are_inert_and_stay_one_cell(hostile: dict[str, Any]) -> None:
    project, env = hostile["project"], hostile["env"]
    ref = "hostile/planted/nasty-fields-001"
    label = f"a|b\nc {NASTY}"
    proc = okstra(["report", "roles", ref], project, env)
    assert proc.returncode == 0, proc.stderr.decode()
    assert b"\x1b" not in proc.stdout + proc.stderr and b"\x07" not in proc.stdout
    proc = okstra(["report", "roles", ref, "--markdown"], project, env)
    assert proc.returncode == 0 and b"\x1b" not in proc.stdout and b"\x07" not in proc.stdout
    lines = proc.stdout.decode().splitlines()
    roles = len(base_manifest(project)["roleExecutions"])
    assert len(lines) == roles + 2 and all(line.startswith("|") for line in lines)
    assert "a\\|b\\x0ac " in lines[2]
    proc = okstra(["report", "roles", ref, "--json"], project, env)
    doc = orjson.loads(proc.stdout)
    assert doc["executionRoles"][0]["executionLabel"] == label  # exact


def test_runs_all_uses_only_index_entries_that_are_runs(
    hostile: dict[str, Any], okstra_home: Path
) -> None:
    project, env = hostile["project"], hostile["env"]
    index = okstra_home / "data" / "runs.jsonl"
    real = project / ".okstra/tasks/perf/widget/runs" / RUN
    shared = hostile["tmp"] / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    foreign = shared / ".okstra/tasks/g/t/runs" / RUN
    foreign.mkdir(parents=True)
    entries: list[Any] = [
        {"runDir": "/etc"},
        {"runDir": str(project / RUN)},
        {"runDir": "relative/.okstra/tasks/g/t/runs/x-001"},
        {"runDir": str(real / ".." / ".." / ".." / ".." / ".." / "..")},
        {"runDir": "/" + "x" * 10_000},
        {"runDir": 5},
        ["not", "an", "object"],
        {"runDir": str(project / ".okstra/tasks/gone/task/runs/x-001"), "at": NASTY},
        {"runDir": str(foreign)},
        {"runDir": str(real), "taskKey": "[/bold]", "runId": OSC52},
    ]
    index.parent.mkdir(parents=True, exist_ok=True)
    index.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in entries) + b"{torn\n")
    proc = okstra(["runs", "--all", "--json"], project, env)
    assert proc.returncode == 0, proc.stderr.decode()
    rows = rows_by_dir(orjson.loads(proc.stdout))
    gone = str(project / ".okstra/tasks/gone/task/runs/x-001")
    assert set(rows) == {str(real), gone, str(foreign)}, sorted(rows)
    assert rows[str(real)]["runState"] == "ok" and rows[str(real)]["runId"] == RUN
    assert rows[gone]["runState"] == "missing" and rows[gone]["createdAt"] is None
    assert rows[str(foreign)]["runState"] == "damaged"
    assert "writable by every user" in rows[str(foreign)]["problem"]
    proc = okstra(["runs", "--all"], project, env)
    assert proc.returncode == 0 and b"\x1b" not in proc.stdout


def make_old(path: Path) -> None:
    then = time.time() - 3600
    for folder, _dirs, files in os.walk(path):
        for name in files:
            os.utime(os.path.join(folder, name), (then, then), follow_symlinks=False)
    os.utime(path, (then, then))


def test_prune_removes_only_old_incomplete_run_directories(hostile: dict[str, Any]) -> None:
    project, env, planted = hostile["project"], hostile["env"], hostile["planted"]
    okstra_dir = project / ".okstra"
    before = tree(okstra_dir)
    for args in (["runs", "--prune"], ["runs", "--prune", "--json"]):
        proc = okstra(args, project, env)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        said = (proc.stdout + proc.stderr).decode()
        assert "--yes" in said and str(planted["incomplete-007"]) in said
        assert tree(okstra_dir) == before
    for args in (["runs", "--yes"], ["runs", "--prune", "--all", "--yes"]):
        assert okstra(args, project, env).returncode == 2
    # A prepare holding the task's sequence lock: its directories stay.
    from okstra_core.prepare.runfiles import task_lock

    with task_lock(planted["incomplete-007"].parent.parent):
        proc = okstra(["runs", "--prune", "--yes", "--json"], project, env)
    doc = orjson.loads(proc.stdout)
    assert proc.returncode == 1 and doc["removed"] == []
    kept = {k["runDir"]: k["why"] for k in doc["kept"]}
    for name in ("incomplete-007", "incomplete-008"):
        assert "sequence lock is not free" in kept[str(planted[name])], kept
    proc = okstra(["runs", "--prune", "--yes"], project, env)
    assert proc.returncode == 1, proc.stderr  # the young one is kept, saying why
    text = proc.stdout.decode()
    assert f"removed  {planted['incomplete-007']}" in text
    assert f"removed  {planted['incomplete-008']}" in text
    assert f"kept     {planted['incomplete-009']}: it changed less than a minute ago" in text
    after = tree(okstra_dir)
    # The task's sequence lock (taken to prune, as a prepare takes it) keeps its sidecar.
    after.pop("tasks/hostile/planted/runs.lock", None)
    gone = {k for k in before if k not in after}
    assert gone and all("/incomplete-007" in k or "/incomplete-008" in k for k in gone), gone
    assert {k: v for k, v in before.items() if k not in gone} == after
    assert os.path.islink(planted["run-link-001"]) and planted["nasty-fields-001"].is_dir()
    make_old(planted["incomplete-009"])
    proc = okstra(["runs", "--prune", "--yes", "--json"], project, env)
    doc = orjson.loads(proc.stdout)
    assert proc.returncode == 0 and doc["removed"] == [str(planted["incomplete-009"])]
    proc = okstra(["runs", "--prune"], project, env)  # nothing left: nothing to ask
    assert proc.returncode == 0 and b"no incomplete run directories" in proc.stdout


def on_a_terminal(args: list[str], cwd: Path, env: dict[str, str], answer: bytes) -> str:
    """Run okstra on a pseudo-terminal; answer its question once it is asked."""
    main, side = pty.openpty()
    proc = subprocess.Popen(
        [*okstra_cmd(), *args], cwd=cwd, env=env, stdin=side, stdout=side, stderr=side
    )
    os.close(side)
    seen = b""
    answered = False
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([main], [], [], 1)
        if ready:
            try:
                chunk = os.read(main, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
            if not answered and b"[y/N]" in seen:
                os.write(main, answer)
                answered = True
        elif proc.poll() is not None:
            break
    proc.wait(timeout=30)
    os.close(main)
    assert answered and proc.returncode == 0, seen
    return seen.decode(errors="replace")


def test_prune_asks_on_a_terminal(tmp_path: Path) -> None:
    project, env = prepared_project(tmp_path)
    leftover = project / ".okstra/tasks/perf/widget/runs/requirements-discovery-002"
    leftover.mkdir()
    make_old(leftover)
    seen = on_a_terminal(["runs", "--prune"], project, env, b"n\n")
    assert str(leftover) in seen and leftover.is_dir()
    seen = on_a_terminal(["runs", "--prune"], project, env, b"y\n")
    assert f"removed  {leftover}" in seen and not leftover.exists()


def test_the_app_reads_every_run_as_a_row(hostile: dict[str, Any]) -> None:
    from okstra_core.environment import Environment
    from okstra_tui import run_actions

    rows, error = run_actions.read_runs(hostile["project"], False, Environment(env=hostile["env"]))
    assert error == "" and len(rows) == len(hostile["planted"]) + 1
    assert {r.state for r in rows} == {"ok", "damaged", "incomplete"}


def test_a_run_with_a_forged_name_in_a_clean_project(tmp_path: Path) -> None:
    project, env = prepared_project(tmp_path)
    plant(project, RUN, None, group="perf", task="other")
    proc = okstra(["status", RUN], project, env)
    assert proc.returncode == 2 and b"names several runs" in proc.stderr
    assert b"perf/widget/" + RUN.encode() in proc.stderr
    proc = okstra(["status", f"widget/{RUN}", "--json"], project, env)
    assert proc.returncode == 0 and orjson.loads(proc.stdout)["taskKey"] == "perf/widget"
    proc = okstra(["status", ESC_NAME], project, env)
    assert proc.returncode == 2 and b"\x1b" not in proc.stderr
