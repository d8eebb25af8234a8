"""The run request: wizard (or argv) → `RunRequest` → `prepare(request)`.

Through the installed `okstra` (subprocess) for what a user does: the host session
context decides host and entry mode, a contradicting flag is refused naming both, an
unreported current-session model is recorded as unknown, reuse of a previous run
pre-fills counts, models and directive; in-process for the argv round trip.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from okstra_core.catalog import load_catalog
from okstra_core.catalog.models import RoleKind
from okstra_core.cli.roleargs import request_from_argv
from okstra_core.documents.inputs import RunInputs
from okstra_core.documents.run import RunManifest
from okstra_core.environment import Environment
from okstra_core.errors import UsageError
from okstra_core.pool import ModelPool
from okstra_core.request import UNREPORTED_MODEL, CurrentModel, HostSessionContext, RunRequest
from tests.conftest import okstra_cmd

TASK_TYPE = "requirements-discovery"


@pytest.fixture(autouse=True)
def no_reported_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OKSTRA_HOST_MODEL", raising=False)
    monkeypatch.delenv("OKSTRA_HOST_EFFORT", raising=False)


def okstra(*args: str, cwd: Path, **env: str) -> tuple[int, Any]:
    proc = subprocess.run(
        [*okstra_cmd(), *args],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        timeout=90,
        stdin=subprocess.DEVNULL,
    )
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()
    return proc.returncode, orjson.loads(proc.stdout)


def flags(project: Path, *extra: str, task_id: str = "checkout") -> list[str]:
    return [
        "prepare",
        f"--project-root={project}",
        "--task-group=shop",
        f"--task-id={task_id}",
        f"--task-type={TASK_TYPE}",
        "--brief=brief.md",
        "--launch=none",
        *extra,
    ]


def read(path: Path | str) -> Any:
    return orjson.loads(Path(path).read_bytes())


# ---------------------------------------------------------------------------- host context


def test_context_without_host_flag_prepares_a_current_session_run(
    project: Path, fake_path: Path
) -> None:
    context = '{"hostId": "claude-code", "entryMode": "current-session"}'
    code, doc = okstra(*flags(project, f"--host-session-context-json={context}"), cwd=project)
    assert code == 0, doc
    assert doc["entryMode"] == "current-session" and doc["leadArgv"] is None
    run = Path(doc["runDir"])
    inputs = read(run / "run-inputs.json")
    assert inputs["host"]["hostId"] == "claude-code"
    assert inputs["host"]["entryMode"] == "current-session"
    manifest = read(run / "run-manifest.json")
    assert manifest["hostRuntime"] == "claude-code" and manifest["entryMode"] == "current-session"
    # The host did not report its model: unknown, never invented.
    leader = manifest["roleExecutions"][0]
    assert leader["role"] == "leader" and leader["binding"]["runner"] == "current-session"
    assert leader["modelRef"] is None and leader["modelSpecDigest"] is None
    assert leader["displayName"] == UNREPORTED_MODEL
    assert manifest["participants"][0]["modelRef"] is None
    assert "executionManifest" not in manifest


@pytest.mark.parametrize(
    ("flag", "value", "said"),
    [("--host", "terminal", "claude-code"), ("--entry-mode", "spawn-process", "current-session")],
)
def test_a_flag_contradicting_the_context_exits_2_naming_both(
    project: Path, fake_path: Path, flag: str, value: str, said: str
) -> None:
    context = '{"hostId": "claude-code", "entryMode": "current-session"}'
    args = flags(project, f"--host-session-context-json={context}", f"{flag}={value}")
    code, doc = okstra(*args, cwd=project)
    assert code == 2 and not doc["ok"]
    assert flag in doc["error"] and value in doc["error"] and said in doc["error"]
    assert not (project / ".okstra").exists()


def test_reported_host_model_reaches_prepare_and_team(project: Path, fake_path: Path) -> None:
    reported = {"OKSTRA_HOST_MODEL": "claude/opus-4.6", "OKSTRA_HOST_EFFORT": "high"}
    args = flags(project, "--host=claude-code", "--entry-mode=current-session")
    code, doc = okstra(*args, cwd=project, **reported)
    assert code == 0, doc
    inputs = read(Path(doc["runDir"]) / "run-inputs.json")
    assert inputs["host"]["currentModel"]["modelRef"] == "claude/opus-4.6"
    assert inputs["host"]["currentModel"]["effort"] == "high"
    leader = read(Path(doc["runDir"]) / "run-manifest.json")["roleExecutions"][0]
    assert leader["modelRef"] == "claude/opus-4.6" and leader["modelSpecDigest"]

    team = ["team", "--json", f"--task-type={TASK_TYPE}", "--host=claude-code"]
    team += ["--entry-mode=current-session", f"--project-root={project}"]
    code, doc = okstra(*team, cwd=project, **reported)
    assert code == 0 and doc["team"][0]["modelRef"] == "claude/opus-4.6", doc
    code, doc = okstra(*team, cwd=project)
    assert code == 0 and doc["team"][0]["modelRef"] is None, doc
    assert doc["team"][0]["display"] == UNREPORTED_MODEL


# ---------------------------------------------------------------------------- values


def test_values_that_look_like_flags_are_values(project: Path, fake_path: Path) -> None:
    code, doc = okstra(*flags(project, "--directive=--dry-run", "--host=terminal"), cwd=project)
    assert code == 0, doc
    assert read(Path(doc["runDir"]) / "run-inputs.json")["directive"] == "--dry-run"


def test_related_tasks_must_be_task_keys(project: Path, fake_path: Path) -> None:
    code, doc = okstra(
        *flags(project, "--related-tasks=x; rm -rf /", "--host=terminal"), cwd=project
    )
    assert code == 2 and doc["field"] == "--related-tasks", doc
    assert not (project / ".okstra").exists()


def test_out_of_range_count_is_refused_where_the_request_is_built(project: Path) -> None:
    env = Environment(env=dict(os.environ))
    with pytest.raises(UsageError, match="between"):
        argv = [a for a in flags(project, "--role-count=analyser=99")[1:] if a != "--launch=none"]
        request_from_argv(argv, env)


# ---------------------------------------------------------------------------- round trip

ENV = Environment(env=dict(os.environ))
CATALOG = load_catalog(ENV)
PROFILE = CATALOG.profile(TASK_TYPE)
POOL = ModelPool.from_catalog(CATALOG, ENV)
SLUG = st.from_regex(r"[a-z0-9]{1,6}(-[a-z0-9]{1,6}){0,2}", fullmatch=True)
TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"))
KEY = st.from_regex(r"[a-z][a-z0-9:#-]{0,12}", fullmatch=True)


@st.composite
def requests(draw: st.DrawFn) -> RunRequest:
    counts: dict[str, int] = {}
    for requirement in PROFILE.static_roles:
        if requirement.kind in (RoleKind.ADJUSTABLE, RoleKind.OPTIONAL) and draw(st.booleans()):
            counts[requirement.role] = draw(st.integers(requirement.min, requirement.max))
    models: dict[str, list[str]] = {}
    for role in ["leader", *(r.role for r in PROFILE.static_roles)]:
        refs = [m.ref for m in POOL.list(role)]
        if refs and draw(st.booleans()):
            models[role] = draw(st.lists(st.sampled_from(refs), min_size=1, max_size=3))
    host_id = draw(st.none() | st.sampled_from(sorted(CATALOG.hosts)))
    model_ref = draw(st.none() | st.sampled_from([m.ref for m in POOL.models()]) | st.just("x/y"))
    context = HostSessionContext(
        host_id=host_id,
        entry_mode=draw(st.sampled_from(["spawn-process", "current-session"])),
        available_functions=tuple(draw(st.lists(SLUG, max_size=2))),
        interaction_surface=draw(st.sampled_from(["cli", "wizard"])),
        current_model=CurrentModel(
            provider=draw(st.none() | st.just("claude")),
            model_ref=model_ref,
            effort=draw(st.none() | st.just("high")),
        ),
    )
    brief = draw(TEXT.filter(lambda s: bool(s) and "\n" not in s))
    return RunRequest(
        project_root=Path("/srv/project"),
        task_group=draw(SLUG),
        task_id=draw(SLUG),
        task_type=TASK_TYPE,
        brief=brief,
        directive=draw(TEXT),
        related_tasks=tuple(draw(st.lists(st.builds(lambda a, b: f"{a}/{b}", SLUG, SLUG)))),
        host=context,
        role_counts=counts,
        role_models=models,
        provenance=draw(st.dictionaries(KEY, SLUG, max_size=3)),
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(request=requests())
def test_render_argv_parses_back_to_an_equal_request(request: RunRequest) -> None:
    argv = request.render_argv()
    # Every value travels as one `--flag=value` argument.
    assert all(a.startswith("--") and "=" in a for a in argv)
    again = request_from_argv(argv, Environment(env={**os.environ, "PATH": "/nonexistent"}))
    assert again == request
    # run-inputs.json is the request, dumped; it reads back to the same request.
    inputs = RunInputs.of(request, "requirements-discovery-001")
    assert RunInputs.parse(orjson.loads(inputs.to_bytes())).request == request


# ---------------------------------------------------------------------------- reuse


def _answer(prompt: dict[str, Any], overrides: dict[str, str]) -> str:
    kind = prompt["meta"].get("stepKind", prompt["id"])
    if prompt["id"] in overrides:
        return overrides[prompt["id"]]
    if kind in overrides:
        return overrides[kind]
    if prompt["default"] is not None:
        return str(prompt["default"])
    return {"brief": "brief.md", "directive": "x"}.get(kind, "")


def _walk(project: Path, state: Path, overrides: dict[str, str], stop: str = "") -> dict[str, Any]:
    code, shown = okstra("wizard", "step", "--state", str(state), "--no-submit", cwd=project)
    assert code == 0, shown
    prompt = shown["next"]
    while prompt["kind"] != "done" and prompt["id"] != stop:
        answer = _answer(prompt, overrides)
        code, data = okstra(
            "wizard", "step", "--state", str(state), f"--answer={answer}", cwd=project
        )
        assert code == 0 and data["ok"], (prompt["id"], data)
        prompt = data["next"]
    return dict(prompt)


@pytest.mark.parametrize("previous_layout", [False, True])
def test_reuse_prefills_counts_models_and_directive(
    project: Path, fake_path: Path, tmp_path: Path, previous_layout: bool
) -> None:
    args = flags(
        project,
        "--host=terminal",
        "--directive=Focus on guest checkout",
        "--role-count=analyser=3",
        "--role-model=analyser=codex/gpt-5.6-sol",
    )
    code, doc = okstra(*args, cwd=project)
    assert code == 0, doc
    inputs_path = Path(doc["runDir"]) / "run-inputs.json"
    prepared = RunInputs.read(inputs_path)
    if previous_layout:
        # The same run as the previous layout wrote it: nested, `role=value` strings.
        old = {
            "schemaVersion": "2.0",
            "runId": prepared.run_id,
            "inputs": {
                "projectRoot": str(prepared.project_root),
                "taskGroup": "shop",
                "taskId": "checkout",
                "taskType": TASK_TYPE,
                "brief": "brief.md",
                "approvedPlan": "",
                "directive": prepared.directive,
                "relatedTasks": "",
                "host": "terminal",
                "entryMode": "",
                "roleCounts": [f"{r}={n}" for r, n in prepared.role_counts.items()],
                "roleModels": [f"{r}={m}" for r, ms in prepared.role_models.items() for m in ms],
                "hostSessionContext": {},
                "argv": [],
            },
        }
        inputs_path.chmod(0o600)
        inputs_path.write_bytes(orjson.dumps(old))
    manifest = RunManifest.read(Path(doc["runDir"]) / "run-manifest.json")
    analysers = [r.model_ref for r in manifest.role_executions if r.role == "analyser"]

    state = tmp_path / "again.json"
    code, data = okstra(
        "wizard", "init", "--state", str(state), "--project-root", str(project), "--host",
        "terminal", cwd=project,
    )  # fmt: skip
    assert code == 0, data
    prompt = _walk(project, state, {"task_pick": "shop/checkout"}, stop="reuse_previous")
    assert prompt["id"] == "reuse_previous", prompt
    code, data = okstra("wizard", "step", "--state", str(state), "--answer=reuse", cwd=project)
    assert code == 0 and data["ok"], data
    wizard = read(state)
    assert wizard["roleCounts"]["analyser"] == 3
    assert wizard["roleModels"]["analyser"][0] == "codex/gpt-5.6-sol"
    assert wizard["directive"] == "Focus on guest checkout"
    answered = {e["step"]: e for e in wizard["answered"]}
    assert answered["directive_pick"]["answer"] == "write"
    assert answered["role-count:analyser"]["provenance"] == f"reused:{prepared.run_id}"
    # Confirm and prepare again: the same counts, models and directive.
    _walk(project, state, {"confirm": "confirm"})
    code, outcome = okstra("wizard", "outcome", "--state", str(state), cwd=project)
    assert code == 0, outcome
    request = outcome["request"]
    assert request["roleCounts"]["analyser"] == 3
    assert request["roleModels"]["analyser"][0] == "codex/gpt-5.6-sol"
    assert request["directive"] == "Focus on guest checkout"
    assert len(request["roleModels"]["analyser"]) == len(analysers) == 3
