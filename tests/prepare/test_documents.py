"""Every file okstra writes is one of its documents, and `okstra schema` describes it.

A whole session through the installed `okstra`: a wizard walked step by step, its
run prepared from the state file (`--launch none`), the same request prepared again
from its renderArgv with a real tmux launch (fake lead CLI). Then every JSON/JSONL file
under the project's `.okstra` and okstra's home is read back through its model with
unknown keys refused, must dump to exactly the same object (the model writes what is on
disk, nothing more or less), and must fit the published schema's keys.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from okstra_core.documents.base import Document
from okstra_core.documents.inputs import RunInputs
from okstra_core.documents.mcp import McpConfig
from okstra_core.documents.resume import ResumeDocument
from okstra_core.documents.run import LeadPromptMeta, RunManifest
from okstra_core.documents.task import ProjectDocument, RunsIndexRow, TaskManifest, parse_event
from okstra_core.documents.worker import ProjectRunsRow, WatcherRecord
from okstra_core.records import validate
from okstra_core.wizard.state import WizardState
from tests.conftest import okstra_cmd

# file name → (schema name, how a decoded record is read back as a JSON object)
Reader = Callable[[Any], dict[str, Any]]


def _through(document: type[Document]) -> Reader:
    def read(data: Any) -> dict[str, Any]:
        return document.parse(data).dump()

    return read


def _wizard_state(data: Any) -> dict[str, Any]:
    return validate(WizardState, data).to_file()


def _event(data: Any) -> dict[str, Any]:
    return parse_event(data).dump()


DOCUMENTS: dict[str, tuple[str, Reader]] = {
    "run-inputs.json": ("run-inputs", _through(RunInputs)),
    "run-manifest.json": ("run-manifest", _through(RunManifest)),
    "lead-prompt.meta.json": ("lead-prompt-meta", _through(LeadPromptMeta)),
    "resume.json": ("resume", _through(ResumeDocument)),
    "task-manifest.json": ("task-manifest", _through(TaskManifest)),
    "project.json": ("project", _through(ProjectDocument)),
    "timeline.jsonl": ("timeline-event", _event),
    "runs.jsonl": ("runs-index", _through(RunsIndexRow)),
    "runs-index.jsonl": ("project-runs", _through(ProjectRunsRow)),
    "mcp.json": ("mcp-config", _through(McpConfig)),
    "watcher.json": ("watcher", _through(WatcherRecord)),
}


@pytest.fixture(autouse=True)
def no_reported_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OKSTRA_HOST_MODEL", raising=False)


def okstra(*args: str, cwd: Path, **env: str) -> tuple[int, Any]:
    proc = subprocess.run(
        [*okstra_cmd(), *args],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()
    return proc.returncode, orjson.loads(proc.stdout)


def walk(project: Path, state: Path) -> None:
    code, data = okstra(
        "wizard", "init", "--state", str(state), "--project-root", str(project),
        "--host", "terminal", cwd=project,
    )  # fmt: skip
    assert code == 0, data
    answers = {"task_group": "shop", "task_id": "checkout", "brief": "brief.md",
               "directive_pick": "write", "directive": "-x: a directive like a flag",
               "related_tasks_pick": "skip"}  # fmt: skip
    prompt = data["next"]
    while prompt["kind"] != "done":
        kind = prompt["meta"].get("stepKind", prompt["id"])
        answer = answers.get(prompt["id"], answers.get(kind, prompt["default"]))
        if kind == "task_pick":
            answer = "new"
        if kind == "confirm":
            answer = "confirm"
        assert answer is not None, prompt
        code, data = okstra(
            "wizard", "step", "--state", str(state), f"--answer={answer}", cwd=project
        )
        assert code == 0 and data["ok"], (prompt["id"], data)
        prompt = data["next"]


def schema_keys(schema: dict[str, Any]) -> list[tuple[set[str], set[str]]]:
    """(properties, required) of the object schema, or of each variant of a union."""
    variants = schema.get("oneOf") or schema.get("anyOf")
    if variants:
        defs = schema.get("$defs", {})
        out = []
        for variant in variants:
            ref = variant.get("$ref", "")
            body = defs[ref.rpartition("/")[2]] if ref else variant
            out.append((set(body.get("properties", {})), set(body.get("required", []))))
        return out
    return [(set(schema.get("properties", {})), set(schema.get("required", [])))]


def check_against_schema(record: dict[str, Any], schema: dict[str, Any], where: str) -> None:
    keys = set(record)
    fits = [
        (props, required)
        for props, required in schema_keys(schema)
        if required <= keys and (keys <= props or schema.get("additionalProperties") is not False)
    ]
    assert fits, f"{where}: keys {sorted(keys)} fit no variant of its schema"


@pytest.mark.tmux
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_every_file_written_is_a_document(
    tmp_path: Path, fake_path: Path, okstra_home: Path
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "brief.md").write_text("Make checkout faster.\n", encoding="utf-8")
    state = tmp_path / "wizard.json"
    walk(project, state)

    code, first = okstra("prepare", "--state", str(state), "--launch=none", cwd=project)
    assert code == 0, first
    code, outcome = okstra("wizard", "outcome", "--state", str(state), cwd=project)
    assert code == 0, outcome
    socket = f"okstra-doc-{uuid.uuid4().hex[:8]}"
    log = tmp_path / "cli.log"
    try:
        code, second = okstra(
            "prepare", *outcome["renderArgv"], "--launch=tmux", cwd=project,
            OKSTRA_TMUX_SOCKET=socket, FAKE_CLI_LOG=str(log),
            FAKE_CLI_SAY="❯ Try something", FAKE_CLI_LINGER="60",
        )  # fmt: skip
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True, check=False)
    assert code == 0 and second["launch"] is not None, second
    # The runs index is the run's life's: a listing adds the two runs prepare made.
    code, listed = okstra("runs", "--json", cwd=project)
    assert code == 0 and len(listed["runs"]) == 2, listed

    # renderArgv → prepare gives the same run inputs as the state file.
    one = orjson.loads((Path(first["runDir"]) / "run-inputs.json").read_bytes())
    two = orjson.loads((Path(second["runDir"]) / "run-inputs.json").read_bytes())
    assert {**one, "runId": ""} == {**two, "runId": ""}
    assert one["directive"] == "-x: a directive like a flag"

    schemas: dict[str, dict[str, Any]] = {}
    for name in {"wizard-state", *(n for n, _ in DOCUMENTS.values())}:
        code, schemas[name] = okstra("schema", name, cwd=project)
        assert code == 0 and schemas[name]["$schema"].startswith("https://json-schema.org/")

    seen: dict[str, int] = {}
    for root in (project / ".okstra", okstra_home):
        for path in sorted(root.rglob("*")):
            if path.suffix not in (".json", ".jsonl") or not path.is_file():
                continue
            if path.parent.name == "wizards" or path == state:
                name, reader = "wizard-state", _wizard_state
            else:
                assert path.name in DOCUMENTS, f"{path}: a file okstra wrote with no document model"
                name, reader = DOCUMENTS[path.name]
            lines = (
                path.read_bytes().splitlines() if path.suffix == ".jsonl" else [path.read_bytes()]
            )
            for number, line in enumerate(lines, start=1):
                data = orjson.loads(line)
                where = f"{path}:{number}"
                assert reader(data) == data, f"{where}: does not read back to itself"
                check_against_schema(data, schemas[name], where)
                seen[name] = seen.get(name, 0) + 1
    # The wizard's state lives outside the project here; read it the same way.
    wizard = orjson.loads(state.read_bytes())
    assert _wizard_state(wizard) == wizard
    check_against_schema(wizard, schemas["wizard-state"], str(state))
    expected = {n for n, _ in DOCUMENTS.values()}
    assert expected <= set(seen), f"not written by this session: {expected - set(seen)}"
    assert seen["run-inputs"] == seen["run-manifest"] == 2
    assert seen["timeline-event"] >= 3  # two run-prepared, one lead-launched


def test_schema_lists_and_refuses(tmp_path: Path) -> None:
    code, listed = okstra("schema", cwd=tmp_path)
    assert code == 0 and "run-manifest" in listed["schemas"] and "wizard-state" in listed["schemas"]
    code, refused = okstra("schema", "nope", cwd=tmp_path)
    assert code == 2 and "run-manifest" in refused["error"]
    code, manifest = okstra("schema", "run-manifest", cwd=tmp_path)
    assert code == 0
    # The execution identity is at the top level of the run manifest.
    assert {"participants", "roleExecutions", "dynamicRoles"} <= set(manifest["properties"])
    assert manifest["additionalProperties"] is False
    assert "executionManifest" not in manifest["properties"]
