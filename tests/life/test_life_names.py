"""A task group in any script is found by every command that takes a run (one name rule)."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

from life_support import base_env, make_fake_clis, okstra, okstra_json, prepare_args
from rich.cells import cell_len

from tests.conftest import okstra_cmd


def test_a_hangul_group_is_found_by_status_attach_resume_and_runs(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    sub = project / "src" / "deep"
    sub.mkdir(parents=True)
    (project / "brief.md").write_text("로그인 화면을 고친다.\n", encoding="utf-8")
    env = base_env(make_fake_clis(tmp_path / "bin"), tmp_path)
    args = prepare_args(project, "none", task_id="화면-개선")
    args[args.index("perf")] = "로그인"
    code, doc = okstra_json(args, cwd=project, env=env)
    assert code == 0, doc
    run_dir = Path(doc["runDir"])
    assert run_dir.parent.parent.name == "화면-개선"
    assert run_dir.parent.parent.parent.name == "로그인"
    name = f"로그인/화면-개선/{doc['runId']}"
    for ref in (name, "로그인/화면-개선", f"화면-개선/{doc['runId']}"):
        code, status = okstra_json(["status", ref, "--json"], cwd=sub, env=env)
        assert code == 0 and status["runDir"] == doc["runDir"], (ref, status)
    resumed = okstra(["resume", name, "--wait", "0"], cwd=sub, env=env)
    assert resumed.returncode == 0, resumed.stderr
    code, _ = okstra_json(["report", "roles", name, "--json"], cwd=sub, env=env)
    assert code == 0
    attach = okstra(["attach", name], cwd=sub, env=env)
    # Found: it says the run was never launched, not "no such run".
    assert attach.returncode == 1 and b"never launched" in attach.stderr, attach.stderr
    code, listed = okstra_json(["runs", "--json"], cwd=sub, env=env)
    assert code == 0
    assert any(r.get("runDir") == doc["runDir"] for r in listed["runs"]), listed
    # A name that breaks the rule is refused by name, nothing is looked up outside.
    bad = okstra(["status", "로그인\u202e/x/requirements-discovery-001"], cwd=sub, env=env)
    assert bad.returncode == 2 and b"Traceback" not in bad.stderr


def test_okstra_runs_never_folds_run_ids_at_120_columns(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "brief.md").write_text("brief\n", encoding="utf-8")
    env = base_env(make_fake_clis(tmp_path / "bin"), tmp_path, COLUMNS="120", LINES="40")
    ids = []
    for task_id in ("로그인-화면-개선-작업-아주-긴-이름", "a-rather-long-task-identifier-x"):
        args = prepare_args(project, "none", task_id=task_id)
        args[args.index("--task-type") + 1] = "implementation-planning"
        code, doc = okstra_json(args, cwd=project, env=env)
        assert code == 0, doc
        ids.append(doc["runId"])
    # On a terminal 120 columns wide (script(1) gives okstra a pty).
    proc = subprocess.run(
        [
            "script",
            "-qec",
            f"stty cols 120 rows 40; {shlex.join([*okstra_cmd(), 'runs'])}",
            "/dev/null",
        ],
        cwd=project,
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    out = proc.stdout.decode("utf-8", "replace")
    assert proc.returncode == 0, out
    lines = out.splitlines()
    for run_id in ids:
        assert any(run_id in line for line in lines), (run_id, out)
    assert all(cell_len(line.rstrip()) <= 120 for line in lines), out


def test_a_hangul_group_answered_in_the_wizard_is_found_by_status(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "brief.md").write_text("로그인\n", encoding="utf-8")
    env = base_env(make_fake_clis(tmp_path / "bin"), tmp_path)
    state = tmp_path / "setup.json"
    init = ["wizard", "init", "--state", str(state), "--project-root", str(project)]
    code, data = okstra_json([*init, "--host", "terminal"], cwd=project, env=env)
    assert code == 0, data
    typed = {"task_group": "로그인 개선", "task_id": "화면", "brief": "brief.md"}
    prompt = data["next"]
    for _ in range(60):
        if prompt["kind"] == "done":
            break
        answer = typed.get(prompt["id"]) or prompt["default"] or "x"
        step = ["wizard", "step", "--state", str(state), f"--answer={answer}"]
        code, data = okstra_json(step, cwd=project, env=env)
        assert code == 0, data
        prompt = data["next"]
    code, doc = okstra_json(
        ["prepare", "--state", str(state), "--launch", "none"], cwd=project, env=env
    )
    assert code == 0, doc
    assert Path(doc["runDir"]).parent.parent.parent.name == "로그인-개선"
    code, status = okstra_json(["status", "로그인-개선/화면", "--json"], cwd=project, env=env)
    assert code == 0 and status["runDir"] == doc["runDir"], status
