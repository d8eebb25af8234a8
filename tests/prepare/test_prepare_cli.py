"""`okstra prepare` / `okstra report` through the installed command (subprocess)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.conftest import okstra_cmd


def run(args: list[str], cwd: Path, **env: str) -> tuple[int, dict[str, Any]]:
    # report roles prints a table unless asked for its JSON document.
    json_flag = ["--json"] if args[:2] == ["report", "roles"] else []
    proc = subprocess.run(
        [*okstra_cmd(), *args, *json_flag],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()
    return proc.returncode, orjson.loads(proc.stdout)


def base_args(project: Path) -> list[str]:
    return [
        "prepare",
        "--project-root",
        str(project),
        "--task-group",
        "perf",
        "--task-id",
        "widget",
        "--task-type",
        "requirements-discovery",
        "--brief",
        "brief.md",
        "--host",
        "terminal",
        "--role-count",
        "analyser=2",
    ]


def test_launch_none_end_to_end(project: Path, fake_path: Path, tmp_path: Path) -> None:
    log = tmp_path / "cli.log"
    code, doc = run([*base_args(project), "--launch", "none"], project, FAKE_CLI_LOG=str(log))
    assert code == 0, doc
    assert doc["ok"] is True and doc["runId"] == "requirements-discovery-001"
    assert doc["backend"] == "none" and doc["launch"] is None
    run_dir = Path(doc["runDir"])
    assert (run_dir / "run-manifest.json").is_file()
    # Only preflight probes ran (--version/--help/the login status); no lead started.
    calls = [orjson.loads(line) for line in log.read_text().splitlines()]
    assert calls and all(
        c["argv"][:1] in (["--version"], ["--help"], ["auth"], ["login"]) for c in calls
    ), calls

    code, roles = run(["report", "roles", str(run_dir)], project)
    assert code == 0 and roles["markdown"].count("role-exec-") == 4
    report = tmp_path / "final.json"
    report.write_bytes(orjson.dumps({"executionRoles": roles["executionRoles"]}))
    assert run(["report", "check", str(run_dir), str(report)], project)[0] == 0
    report.write_bytes(orjson.dumps({"executionRoles": roles["executionRoles"][:2]}))
    code, refused = run(["report", "roles", str(run_dir), "--report", str(report)], project)
    assert code == 2 and refused["ok"] is False and len(refused["missing"]) == 2


def test_exec_launch_runs_the_lead_cli_in_the_foreground(
    project: Path, fake_path: Path, tmp_path: Path
) -> None:
    log = tmp_path / "cli.log"
    code, doc = run([*base_args(project), "--launch", "exec"], project, FAKE_CLI_LOG=str(log))
    assert code == 0, doc
    calls = [orjson.loads(line) for line in log.read_text().splitlines()]
    lead = [c for c in calls if "--session-id" in c["argv"]]
    assert len(lead) == 1 and lead[0]["cli"] == "claude"
    assert doc["leadSessionId"] in lead[0]["argv"]
    assert str(Path(doc["leadPromptPath"])) in lead[0]["argv"]
    manifest = orjson.loads((Path(doc["runDir"]) / "run-manifest.json").read_bytes())
    leader = manifest["participants"][0]
    # okstra stayed the parent: the lead's exit (status 0) is recorded.
    assert leader["status"] == "exited" and leader["exitStatus"] == 0
    assert leader["sessionRef"] == doc["leadSessionId"]


def test_dry_run_and_errors(project: Path, fake_path: Path) -> None:
    code, doc = run([*base_args(project), "--dry-run", "--launch", "tmux"], project)
    assert code == 0 and doc["dryRun"] is True and doc["tmuxCommands"], doc
    assert not (project / ".okstra").exists()
    code, doc = run([*base_args(project), "--role-count", "analyser=2"], project)
    assert code == 2 and doc["ok"] is False
    assert not (project / ".okstra").exists()
    code, doc = run(["prepare", "--state", "x.json", "--task-id", "y"], project)
    assert code == 2 and "not both" in doc["error"]


def test_prepare_from_state_file(project: Path, fake_path: Path, tmp_path: Path) -> None:
    from okstra_core.environment import Environment
    from tests.prepare.test_prepare_pipeline import confirmed_wizard

    state = tmp_path / "wizard.json"
    confirmed_wizard(state, project, Environment(env=dict(os.environ)))
    code, doc = run(["prepare", "--state", str(state), "--launch", "none"], project)
    assert code == 0, doc
    assert doc["runId"].endswith("-001") and Path(doc["runDir"]).is_dir()


def _answers_of_a_confirmed_setup(project: Path, tmp_path: Path) -> tuple[Path, list[Any]]:
    """A confirmed setup's answers file (`okstra wizard answers`), and its entries."""
    from okstra_core.environment import Environment
    from tests.prepare.test_prepare_pipeline import confirmed_wizard

    state = tmp_path / "source-setup.json"
    confirmed_wizard(state, project, Environment(env=dict(os.environ)))
    code, doc = run(["wizard", "answers", "--state", str(state)], project)
    assert code == 0, doc
    file = tmp_path / "answers.json"
    file.write_bytes(orjson.dumps(doc["answers"]))
    return file, doc["answers"]


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else []


def test_prepare_answers_replays_and_prepares_in_one_process(
    project: Path, fake_path: Path, tmp_path: Path
) -> None:
    answers, entries = _answers_of_a_confirmed_setup(project, tmp_path)
    args = ["prepare", "--answers", str(answers), "--project-root", str(project)]
    args += ["--host", "terminal", "--state", "scripted", "--launch", "none"]
    code, doc = run(args, project)
    assert code == 0 and doc["ok"] is True, doc
    assert doc["runId"] == "requirements-discovery-001" and Path(doc["runDir"]).is_dir()
    # The setup is saved (confirmed, every answer) and knows the run it prepared: the
    # same file `wizard init --answers` + `prepare --state` would leave.
    code, shown = run(["wizard", "show", "--state", "scripted"], project)
    assert code == 0 and shown["prompt"]["kind"] == "done"
    assert [h["answer"] for h in shown["history"]] == [e["answer"] for e in entries]
    code, again = run(["prepare", "--state", "scripted", "--launch", "none"], project)
    assert code == 2 and again["existingRun"]["runId"] == "requirements-discovery-001"
    # Its run is the run `prepare --state` makes of the same setup.
    code, outcome = run(["wizard", "outcome", "--state", "scripted"], project)
    assert code == 0
    inputs = orjson.loads((Path(doc["runDir"]) / "run-inputs.json").read_bytes())
    assert inputs["taskGroup"] == outcome["request"]["taskGroup"] == "perf"


def test_prepare_answers_dry_run_writes_nothing(
    project: Path, fake_path: Path, tmp_path: Path
) -> None:
    answers, _ = _answers_of_a_confirmed_setup(project, tmp_path)
    home = Path(os.environ["OKSTRA_HOME"])
    before = _tree(home), _tree(project)
    args = ["prepare", "--answers", str(answers), "--project-root", str(project), "--dry-run"]
    code, doc = run([*args, "--state", "dry"], project)
    assert code == 0 and doc["dryRun"] is True, doc
    after = _tree(home), _tree(project)
    assert [p for p in after[0] if "wizards" in p] == [p for p in before[0] if "wizards" in p]
    assert after[1] == before[1]


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        # A refused answer: named by its index and step.
        (lambda e: [*e[:2], {"step": "task_id", "answer": "../escape"}, *e[3:]], "[2]", "task_id"),
        # A malformed entry: named by its index and field.
        (lambda e: [{"step": "task_pick", "answer": 1}, *e[1:]], "[0].answer", "string"),
        # Answers that stop before the confirmation.
        (lambda e: e[:-1], None, "before the setup is confirmed"),
    ],
)
def test_prepare_answers_bad_answers_exit_2_and_write_nothing(
    project: Path, fake_path: Path, tmp_path: Path, change: Any, field: str | None, words: str
) -> None:
    answers, entries = _answers_of_a_confirmed_setup(project, tmp_path)
    answers.write_bytes(orjson.dumps(change(entries)))
    home = Path(os.environ["OKSTRA_HOME"])
    before = _tree(home), _tree(project)
    args = ["prepare", "--answers", str(answers), "--project-root", str(project)]
    code, doc = run([*args, "--state", "bad", "--launch", "none"], project)
    assert code == 2 and doc["ok"] is False, doc
    assert doc["file"] == str(answers) and words in doc["error"]
    if field is not None:
        assert doc["field"] == field
    assert (_tree(home), _tree(project)) == before


def test_prepare_answers_refuses_other_request_flags(project: Path, tmp_path: Path) -> None:
    answers = tmp_path / "answers.json"
    answers.write_text("[]", encoding="utf-8")
    base = ["prepare", "--answers", str(answers), "--project-root", str(project)]
    code, doc = run([*base, "--task-id", "x"], project)
    assert code == 2 and doc["field"] == "--task-id"
    code, doc = run([*base, "--again"], project)
    assert code == 2 and doc["field"] == "--again"
    code, doc = run(["prepare", "--answers", str(answers)], project)
    assert code == 2 and doc["field"] == "--project-root"
