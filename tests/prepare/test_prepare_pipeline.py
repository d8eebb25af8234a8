"""The prepare pipeline end to end in-process, with fake CLIs on PATH."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from okstra_core.cli.roleargs import request_from_argv
from okstra_core.documents.inputs import RunInputs
from okstra_core.environment import Environment
from okstra_core.errors import AssignmentResolutionError, OkstraError, PrepareError, UsageError
from okstra_core.prepare import prepare
from okstra_core.records import to_data
from okstra_core.request import RunRequest
from okstra_core.store import read_lines
from tests.prepare.prepare_support import request_of


def inputs(project: Path, **kw: object) -> RunRequest:
    return request_of(project, **kw)


def snapshot(*roots: Path) -> dict[str, bytes]:
    """Every path under `roots` and its bytes; OKSTRA_HOME's `cache/` is left out.

    The cache holds only what okstra derived from files that validated (a catalog);
    any command may fill it, and removing it loses nothing.
    """
    out: dict[str, bytes] = {}
    for root in roots:
        for p in sorted(root.rglob("*")):
            if p.is_relative_to(root / "cache"):
                continue
            out[str(p)] = p.read_bytes() if p.is_file() else b"<dir>"
    return out


def test_prepare_writes_every_run_file(project: Path, env: Environment, okstra_home: Path) -> None:
    steps: list[str] = []
    result = prepare(
        inputs(project, directive="Be brief.", role_counts=("analyser=2",)),
        launch="none",
        environment=env,
        on_step=steps.append,
    )
    assert steps[0] == "validating inputs" and "writing the run files" in steps
    task = project / ".okstra/tasks/perf/widget"
    run = task / "runs/requirements-discovery-001"
    assert result.run_dir == run and result.run_id == "requirements-discovery-001"
    for path, digest in ((f.path, f.sha256) for f in result.files if f.action != "append"):
        assert hashlib.sha256(path.read_bytes()).hexdigest() == digest, path
    for name in ("run-inputs.json", "run-manifest.json", "lead-prompt.md", "lead-prompt.meta.json"):
        assert (run / name).stat().st_mode & 0o077 == 0, name

    manifest = orjson.loads((run / "run-manifest.json").read_bytes())
    assert manifest["schemaVersion"] == "2.0" and manifest["executionIdentityVersion"] == 2
    assert manifest["leadSessionId"] == result.lead_session_id and result.lead_session_id
    em = manifest  # the execution identity sits at the top level
    assert "executionManifest" not in manifest
    assert [p["participantRef"] for p in em["participants"]] == [
        "participant-001",
        "participant-002",
        "participant-003",
        "participant-004",
    ]
    assert all(p["status"] == "prepared" for p in em["participants"])
    # Only the leader may change the project here; nothing was started at run time.
    assert [p["workerWriteCapability"] for p in em["participants"]] == [
        "workspace-write",
        "read-only",
        "read-only",
        "read-only",
    ]
    # Bound at prepare: no source, written as null (as the earlier okstra wrote it).
    assert all(r["sourceRoleExecutionRef"] is None for r in em["roleExecutions"])
    refs = [r["roleExecutionRef"] for r in em["roleExecutions"]]
    assert refs == [
        "role-exec-leader-001",
        "role-exec-analyser-001",
        "role-exec-analyser-002",
        "role-exec-report-writer-001",
    ]
    second = em["roleExecutions"][2]
    assert second["executionLabel"] == f"analyser#2 · {second['modelRef']}"
    assert second["servedModelAttestation"] == "unknown"
    assert len(second["modelSpecDigest"]) == 64
    assert em["roleExecutions"][1]["modelRef"] != second["modelRef"]  # distinct = model

    prompt = (run / "lead-prompt.md").read_text(encoding="utf-8")
    assert "Make the widget faster." in prompt and "Be brief." in prompt
    assert second["executionLabel"] in prompt
    # Terminal host: okstra starts each worker with its CLI; the lead runs okstra.
    ref = second["roleExecutionRef"]
    assert f"okstra worker start perf/widget/requirements-discovery-001 {ref} " in prompt
    assert ".okstra/tasks/perf/widget/runs/requirements-discovery-001/run-manifest.json" in prompt
    meta = orjson.loads((run / "lead-prompt.meta.json").read_bytes())
    assert meta["promptSha256"] == hashlib.sha256(prompt.encode()).hexdigest()
    assert meta["participantRef"] == "participant-001"
    assert meta["roleExecutionRef"] == "role-exec-leader-001" and meta["attempt"] == 1

    inputs_doc = orjson.loads((run / "run-inputs.json").read_bytes())
    assert inputs_doc["roleCounts"] == {"analyser": 2} and inputs_doc["directive"] == "Be brief."
    task_manifest = orjson.loads((task / "task-manifest.json").read_bytes())
    assert task_manifest["workflow"]["currentPhase"] == "requirements-discovery"
    assert [e["roleExecutionRef"] for e in task_manifest["roleExecutionIndex"]] == refs
    assert task_manifest["task"]["briefPath"] == "brief.md"
    assert "requirements-discovery-001" in (task / "task-index.md").read_text(encoding="utf-8")
    events = list(read_lines(task / "timeline.jsonl"))
    assert [e["event"] for e in events] == ["run-prepared"]
    project_json = orjson.loads((project / ".okstra/project.json").read_bytes())
    assert project_json["tasks"]["perf/widget"]["lastRunId"] == "requirements-discovery-001"
    central = list(read_lines(okstra_home / "data" / "runs.jsonl"))
    assert central[-1]["runId"] == "requirements-discovery-001"
    resume = orjson.loads((run / "resume.json").read_bytes())
    assert result.lead_session_id in orjson.dumps(resume).decode()
    assert result.lead_argv is not None and result.lead_session_id in result.lead_argv


def test_rerun_creates_a_new_run_and_keeps_the_old(project: Path, env: Environment) -> None:
    first = prepare(inputs(project), launch="none", environment=env)
    before = snapshot(first.run_dir)
    second = prepare(inputs(project), launch="none", environment=env)
    assert second.run_id == "requirements-discovery-002"
    assert snapshot(first.run_dir) == before
    assert first.lead_session_id != second.lead_session_id
    task = orjson.loads((project / ".okstra/tasks/perf/widget/task-manifest.json").read_bytes())
    runs = [e["runId"] for e in task["roleExecutionIndex"]]
    assert runs.count("requirements-discovery-001") == runs.count("requirements-discovery-002")
    assert task["latestRun"]["runId"] == "requirements-discovery-002"


def test_dry_run_writes_nothing(project: Path, env: Environment, okstra_home: Path) -> None:
    before = snapshot(project, okstra_home)
    result = prepare(inputs(project), launch="tmux", dry_run=True, environment=env)
    assert snapshot(project, okstra_home) == before
    doc = to_data(result)
    assert doc["dryRun"] is True and doc["runId"] == "requirements-discovery-001"
    paths = {Path(f["path"]).name for f in doc["files"]}
    assert {"run-inputs.json", "run-manifest.json", "lead-prompt.md", "task-manifest.json"} <= paths
    assert all(len(f["sha256"]) == 64 for f in doc["files"])
    assert doc["leadArgv"][0].endswith("claude") and "--session-id" in doc["leadArgv"]
    assert doc["tmuxCommands"] and Path(doc["tmuxCommands"][0][0]).name == "tmux"
    assert all(p["ok"] for p in doc["preflight"])


ERRORS: list[tuple[dict[str, object], type[OkstraError], str]] = [
    ({"role_counts": ("analyser=9",)}, UsageError, "analyser"),
    ({"role_counts": ("analyser",)}, UsageError, "analyser"),
    ({"role_counts": ("ghost=1",)}, UsageError, "ghost"),
    ({"role_models": ("analyser=nobody/none",)}, UsageError, "nobody"),
    ({"brief": "missing.md"}, PrepareError, "brief"),
    ({"task_type": "implementation"}, PrepareError, "approved plan"),
    ({"task_group": "../x"}, UsageError, "task group"),
]


@pytest.mark.parametrize(("kw", "error", "needle"), ERRORS)
def test_refused_inputs_write_nothing(
    project: Path,
    env: Environment,
    okstra_home: Path,
    kw: dict[str, object],
    error: type[OkstraError],
    needle: str,
) -> None:
    before = snapshot(project, okstra_home)
    with pytest.raises(error) as info:
        prepare(inputs(project, **kw), launch="none", environment=env)
    assert needle in info.value.render()
    assert snapshot(project, okstra_home) == before


def test_malformed_plan_stages_all_listed_and_nothing_written(
    project: Path, env: Environment, okstra_home: Path
) -> None:
    plan = project / "plan.md"
    plan.write_text(
        "---\napproved: true\n---\n"
        "## Stage 1\nConformance tests: later\n"
        "## Stage 2\nConformance exemption: docs only\n"
        "## Stage 3\nConformance tests: stage-3 — elsewhere/stage-3.sh (requires=[])\n",
        encoding="utf-8",
    )
    before = snapshot(project, okstra_home)
    with pytest.raises(PrepareError) as info:
        prepare(
            inputs(project, task_type="implementation", approved_plan="plan.md"),
            launch="none",
            environment=env,
        )
    text = info.value.render()
    assert "stage 1:" in text and "stage 3:" in text and "stage 2:" not in text
    assert snapshot(project, okstra_home) == before


def test_unresolvable_team_passes_the_resolution_error_through(
    project: Path, fake_bin: Callable[..., Path], okstra_home: Path
) -> None:
    only_claude = fake_bin("claude", directory=project.parent / "only-claude")
    env = Environment(env={**os.environ, "PATH": f"{only_claude}{os.pathsep}/usr/bin"})
    before = snapshot(project, okstra_home)
    with pytest.raises(AssignmentResolutionError) as info:
        prepare(
            inputs(project, role_models=("analyser=codex/gpt-5.6-sol",)),
            launch="none",
            environment=env,
        )
    assert any("codex" in c for c in info.value.candidates)
    assert snapshot(project, okstra_home) == before


def test_approved_implementation_plan(project: Path, env: Environment) -> None:
    plan = project / "plan.md"
    plan.write_text(
        "---\napproved: true\n---\n## Stage 1\nConformance tests: stage-1 — "
        ".okstra/tasks/perf/widget/qa/scripts/stage-1.sh (requires=[db])\n",
        encoding="utf-8",
    )
    result = prepare(
        inputs(project, task_type="implementation", approved_plan="plan.md"),
        launch="none",
        environment=env,
    )
    manifest = orjson.loads((result.run_dir / "run-manifest.json").read_bytes())
    assert manifest["approvedPlan"]["stages"] == [1]
    roles = [r["role"] for r in manifest["roleExecutions"]]
    assert roles[0] == "leader" and roles.count("implementer") == 1
    assert manifest["dynamicRoles"] == [
        {"role": "fixer", "dutyId": "fix-cycle", "workerWriteCapability": "workspace-write"}
    ]
    capability = {p["role"]: p["workerWriteCapability"] for p in manifest["participants"]}
    assert capability == {
        "leader": "workspace-write",
        "implementer": "workspace-write",
        "verifier": "read-only",
        "report-writer": "read-only",
    }
    prompt = (result.run_dir / "lead-prompt.md").read_text(encoding="utf-8")
    assert "qa/scripts/stage-1.sh" in prompt and "fixer" in prompt


def test_render_argv_replays_to_the_same_run_inputs(project: Path, env: Environment) -> None:
    original = inputs(
        project, directive="-x leading dash", related_tasks="a/b", role_counts=("analyser=1",)
    )
    again = request_from_argv(original.render_argv(), env)
    assert again == original
    result = prepare(again, launch="none", environment=env)
    doc = orjson.loads((result.run_dir / "run-inputs.json").read_bytes())
    # The argv reruns the resolved team: the request's flags, and every model chosen.
    assert set(original.render_argv()) <= set(doc["argv"])
    manifest = orjson.loads((result.run_dir / "run-manifest.json").read_bytes())
    for execution in manifest["roleExecutions"]:
        flag = f"--role-model={execution['role']}={execution['modelRef']}"
        assert flag in doc["argv"], (flag, doc["argv"])
    assert request_from_argv(tuple(doc["argv"]), env).role_counts["analyser"] == 1
    assert RunInputs.read(result.run_dir / "run-inputs.json").request == original


def confirmed_wizard(state: Path, project: Path, env: Environment) -> None:
    from okstra_core.session import Wizard

    wizard = Wizard.init(state, project, host="terminal", environment=env)
    answers = {
        "task_pick": "new",
        "task_group": "perf",
        "task_id": "widget",
        "brief": "brief.md",
        "directive_pick": "skip",
        "related_tasks_pick": "skip",
        "confirm": "confirm",
    }
    for _ in range(40):
        prompt = wizard.prompt()
        if prompt.kind == "done":
            return
        kind = prompt.meta.get("stepKind", prompt.id)
        answer = answers.get(kind, prompt.default)
        assert answer is not None, prompt
        wizard.submit(answer)
    raise AssertionError("the wizard never finished")


def test_prepare_from_state(project: Path, env: Environment, tmp_path: Path) -> None:
    from okstra_core.frontend import request_from_state

    state = tmp_path / "wizard.json"
    confirmed_wizard(state, project, env)
    request = request_from_state(state, env)
    result = prepare(request, launch="none", environment=env)
    assert result.run_id.endswith("-001")
    doc = orjson.loads((result.run_dir / "run-inputs.json").read_bytes())
    assert doc["taskGroup"] == "perf" and doc["brief"] == "brief.md"
    # The state's renderArgv prepares the same request.
    assert request_from_argv(request.render_argv(), env) == request


def test_current_session_launches_nothing(project: Path, env: Environment) -> None:
    context = '{"currentModel": {"modelRef": "claude/opus-4.6"}}'
    result = prepare(
        inputs(
            project,
            host="claude-code",
            entry_mode="current-session",
            host_session_context_json=context,
        ),
        launch="auto",
        environment=env,
    )
    assert result.lead_argv is None and result.launch is None and result.backend == "none"
    assert not (result.run_dir / "resume.json").exists()
    manifest = orjson.loads((result.run_dir / "run-manifest.json").read_bytes())
    leader = manifest["participants"][0]
    assert leader["runner"] == "current-session" and leader["modelRef"] == "claude/opus-4.6"
    prompt = result.lead_prompt_path.read_text(encoding="utf-8")
    assert "this host session is the lead" in prompt
    executions = manifest["roleExecutions"]
    assert executions[0]["binding"]["runner"] == "current-session"
    native = [r for r in executions if r["binding"]["runner"] == "native-session"]
    # claude-code runs claude workers natively; the bundled defaults put claude on the team.
    assert native and all(r["provider"] == "claude" for r in native)
    assert "native sub-session" in prompt


def test_runs_prepared_within_one_second_list_newest_first(project: Path, env: Environment) -> None:
    """`createdAt` is to the second; `okstra runs` still lists the later run first."""
    import dataclasses
    from datetime import UTC, datetime

    from okstra_core.life.runs import all_runs, project_runs

    fixed = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
    same_second = dataclasses.replace(env, now=lambda: fixed)
    # Task ids whose directory order is the reverse of their creation order.
    first = prepare(inputs(project, task_id="zeta"), launch="none", environment=same_second)
    second = prepare(inputs(project, task_id="alpha"), launch="none", environment=same_second)
    for rows in (project_runs(project, same_second), all_runs(same_second)):
        assert [r.run_dir for r in rows][:2] == [second.run_dir, first.run_dir]
