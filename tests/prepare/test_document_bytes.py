"""The bytes of every run document are pinned: what a record writes, and what it reads.

`tests/prepare/documents/` holds the exact bytes each document wrote when these
fixtures were made (canonical JSON; one JSONL line for timeline events and
`runs.jsonl` rows). A document built here from the same values must write the same
bytes, and reading those bytes back must give an equal document. The `-extra`
fixtures are shared files with keys okstra does not own (at the top and in nested
blocks): they are written back unchanged.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from okstra_core.documents.base import Document
from okstra_core.documents.inputs import RunInputs
from okstra_core.documents.resume import ResumeDiscover, ResumeDocument, ResumeParticipant
from okstra_core.documents.run import (
    ApprovedPlanRef,
    BindingRecord,
    DynamicRole,
    FileRef,
    LeadPromptMeta,
    Participant,
    RoleExecution,
    RunManifest,
)
from okstra_core.documents.task import (
    LastPreparedRun,
    LatestRun,
    LeadExited,
    LeadLaunched,
    LeadLaunchFailed,
    LeadStopRequested,
    NextPhase,
    ProjectDocument,
    ProjectTask,
    RoleExecutionIndexEntry,
    RunPrepared,
    RunsIndexRow,
    SessionDiscovered,
    TaskIdentity,
    TaskManifest,
    Workflow,
)
from okstra_core.request import CurrentModel, HostSessionContext, RunRequest

HERE = Path(__file__).parent / "documents"
NOW = "2026-11-30T16:40:00+00:00"
RUN = "requirements-discovery-003"
MANIFEST = ".okstra/tasks/shop/checkout/runs/requirements-discovery-003/run-manifest.json"


def _request() -> RunRequest:
    return RunRequest(
        project_root=Path("/home/dev/shop"),
        task_group="shop",
        task_id="checkout",
        task_type="requirements-discovery",
        brief="brief.md",
        approved_plan="",
        directive="-x: keep the cart; ünïcode too",
        related_tasks=("shop/cart", "ops/deploy"),
        host=HostSessionContext(
            host_id="claude-code",
            entry_mode="spawn-process",
            available_functions=("Task", "Bash"),
            interaction_surface="wizard",
            current_model=CurrentModel(
                provider="anthropic", model_ref="anthropic/claude-opus-4", effort="high"
            ),
        ),
        role_counts={"critic": 2, "researcher": 0},
        role_models={"critic": ["openai/gpt-5", "google/gemini-2.5-pro"]},
        provenance={"task_type": "chosen", "count:critic": "default:user"},
    )


def _participants() -> tuple[Participant, ...]:
    lead = Participant(
        participant_ref="participant-001",
        role="leader",
        provider="anthropic",
        model_ref="anthropic/claude-opus-4",
        model_id="claude-opus-4-20250514",
        runner="cli-wrapper",
        host_runtime="claude-code",
        host_model_value="opus",
        entry_mode="spawn-process",
        session_ref="0b0e7b1e-4f4c-4d43-9a53-3f1a2b6c7d8e",
        window_ref="okstra:checkout",
        status="exited",
        worker_write_capability="workspace-write",
        launch_backend="tmux",
        launched_at=NOW,
        pane_ref="%3",
        tmux_socket="okstra-1000",
        process_id=4242,
        process_start="12345678",
        parent_process_id=4200,
        parent_start="12345600",
        stop_requested_at=NOW,
        exit_status=0,
        exit_signal=15,
        exited_at=NOW,
        end_detail="the lead CLI ended",
    )
    critic = Participant(
        participant_ref="participant-002",
        role="critic",
        provider="openai",
        model_ref=None,
        model_id=None,
        runner="native-session",
        host_runtime="codex",
        entry_mode="spawn-process",
    )
    return lead, critic


def _executions() -> tuple[RoleExecution, ...]:
    return (
        RoleExecution(
            role_execution_ref="role-execution-001",
            participant_ref="participant-001",
            role="leader",
            duty="lead",
            provider="anthropic",
            model_ref="anthropic/claude-opus-4",
            model_id="claude-opus-4-20250514",
            display_name="Claude Opus 4",
            execution="leader-1",
            ordinal=1,
            execution_label="leader#1 (Claude Opus 4)",
            model_spec_digest="sha256:abc",
            binding=BindingRecord(
                runner="cli-wrapper",
                host_runtime="claude-code",
                host_model_value="opus",
                execution_value="claude --model opus",
            ),
            provenance="chosen",
        ),
        RoleExecution(
            role_execution_ref="role-execution-002",
            participant_ref="participant-002",
            role="critic",
            duty="critique",
            provider="openai",
            model_ref=None,
            model_id=None,
            display_name="this session (model not reported)",
            execution="critic-1",
            ordinal=1,
            execution_label="critic#1",
            model_spec_digest=None,
            binding=BindingRecord(runner="native-session", host_runtime="codex"),
            provenance="default:user",
            served_model_attestation="attested",
            status="launched",
            source_role_execution_ref="role-execution-001",
        ),
    )


def _run_manifest(**changes: Any) -> RunManifest:
    values: dict[str, Any] = {
        "okstra_version": "0.4.0",
        "created_at": NOW,
        "run_id": RUN,
        "seq": 3,
        "task_type": "requirements-discovery",
        "project_id": "shop-1a2b",
        "project_root": "/home/dev/shop",
        "task_key": "shop/checkout",
        "task_group": "shop",
        "task_id": "checkout",
        "host_runtime": "claude-code",
        "entry_mode": "spawn-process",
        "lead_session_id": "0b0e7b1e-4f4c-4d43-9a53-3f1a2b6c7d8e",
        "lead_session_id_kind": "uuid4",
        "brief": FileRef(path="brief.md", sha256="ab" * 32),
        "approved_plan": ApprovedPlanRef(path="plan.md", sha256="cd" * 32, stages=(1, 2, 5)),
        "paths": {"runManifest": MANIFEST, "leadPrompt": "lead-prompt.md"},
        "participants": _participants(),
        "role_executions": _executions(),
        "dynamic_roles": (
            DynamicRole(role="scout", duty="explore"),
            DynamicRole(role="fixer", duty="fix", worker_write_capability="workspace-write"),
        ),
    }
    values.update(changes)
    return RunManifest(**values)


def _task_manifest() -> TaskManifest:
    return TaskManifest(
        task=TaskIdentity(
            project_id="shop-1a2b",
            task_group="shop",
            task_id="checkout",
            task_key="shop/checkout",
            brief_path="brief.md",
        ),
        created_at="2026-11-01T09:00:00+00:00",
        updated_at=NOW,
        workflow=Workflow(
            current_phase="requirements-discovery",
            current_phase_state="prepared",
            phase_states={"requirements-discovery": "prepared", "error-analysis": "done"},
            last_completed_phase="",
            next_recommended_phase=NextPhase(phase="implementation-planning", status="pending"),
            awaiting_approval=False,
        ),
        role_execution_index=(
            RoleExecutionIndexEntry(
                run_id=RUN,
                task_type="requirements-discovery",
                role_execution_ref="role-execution-001",
                participant_ref="participant-001",
                role="leader",
                ordinal=1,
                model_ref=None,
                execution_label="leader#1",
                model_spec_digest=None,
                run_manifest_path=MANIFEST,
            ),
        ),
        latest_run=LatestRun(
            run_id=RUN,
            task_type="requirements-discovery",
            seq=3,
            created_at=NOW,
            run_dir=".okstra/tasks/shop/checkout/runs/requirements-discovery-003",
            run_manifest_path=MANIFEST,
            run_inputs_path="run-inputs.json",
            lead_prompt_path="lead-prompt.md",
        ),
        latest_run_by_task_type={"requirements-discovery": RUN},
    )


def _resume(*, okstra: str | None) -> ResumeDocument:
    ready = ResumeParticipant(
        participant="participant-001",
        role="leader",
        provider="anthropic",
        cli="claude",
        model="opus",
        cwd="/home/dev/shop",
        session_id="0b0e7b1e-4f4c-4d43-9a53-3f1a2b6c7d8e",
        session_id_kind="uuid4",
        status="ready",
        resume_argv=("claude", "--resume", "0b0e7b1e-4f4c-4d43-9a53-3f1a2b6c7d8e"),
        resume_command="claude --resume 0b0e7b1e-4f4c-4d43-9a53-3f1a2b6c7d8e",
        env={"CLAUDE_CONFIG_DIR": "/home/dev/.claude"},
    )
    pending = ResumeParticipant(
        participant="participant-002",
        role="critic",
        provider="openai",
        cli="codex",
        model="gpt-5",
        cwd="/home/dev/shop",
        session_id_kind="discover",
        status="pending discovery",
        resume_argv_template=("codex", "resume", "{session_id}"),
        discover=ResumeDiscover(
            glob="~/.codex/sessions/**/*.jsonl",
            id_pattern="[0-9a-f-]{36}",
            cwd_field="cwd",
            timeout_seconds=2.5,
        ),
    )
    return ResumeDocument(participants=(ready, pending), okstra=okstra)


def documents() -> dict[str, Document]:
    """name → a document with realistic values (a file `documents/<name>.json` each)."""
    return {
        "run-inputs": RunInputs.of(_request(), RUN),
        "run-manifest": _run_manifest(),
        "run-manifest-current-session": _run_manifest(
            entry_mode="current-session",
            lead_session_id=None,
            lead_session_id_kind=None,
            approved_plan=None,
            participants=_participants()[1:],
            role_executions=_executions()[1:],
            dynamic_roles=(),
        ),
        "lead-prompt-meta": LeadPromptMeta(
            invocation_id=f"{RUN}-lead",
            participant_ref="participant-001",
            role_execution_ref="role-execution-001",
            duty="lead",
            prompt_sha256="ef" * 32,
            prompt_path="lead-prompt.md",
        ),
        "resume": _resume(okstra="/usr/local/bin/okstra"),
        "resume-no-okstra": _resume(okstra=None),
        "task-manifest": _task_manifest(),
        "project": ProjectDocument(
            project_id="shop-1a2b",
            project_root="/home/dev/shop",
            tasks={
                "shop/checkout": ProjectTask(
                    last_run_id=RUN, last_task_type="requirements-discovery", updated_at=NOW
                )
            },
            last_prepared_run=LastPreparedRun(task_key="shop/checkout", run_id=RUN, at=NOW),
            updated_at=NOW,
        ),
        "project-bare": ProjectDocument(project_id="shop-1a2b", project_root="/home/dev/shop"),
        "runs-index": RunsIndexRow(
            at=NOW,
            project_id="shop-1a2b",
            project_root="/home/dev/shop",
            task_key="shop/checkout",
            task_type="requirements-discovery",
            run_id=RUN,
            run_dir="/home/dev/shop/.okstra/tasks/shop/checkout/runs/" + RUN,
            run_manifest_path="/home/dev/shop/" + MANIFEST,
            okstra_version="0.4.0",
        ),
        "event-run-prepared": RunPrepared(
            at=NOW,
            run_id=RUN,
            task_type="requirements-discovery",
            run_manifest_path=MANIFEST,
            role_execution_refs=("role-execution-001", "role-execution-002"),
        ),
        "event-lead-launched": LeadLaunched(
            at=NOW, run_id=RUN, backend="tmux", window_ref="okstra:checkout", pane_ref="%3"
        ),
        "event-lead-launch-failed": LeadLaunchFailed(
            at=NOW, run_id=RUN, backend="exec", error="claude: not found"
        ),
        "event-session-discovered": SessionDiscovered(
            at=NOW,
            run_id=RUN,
            participant_ref="participant-002",
            role="critic",
            provider="openai",
            session_id="0199aa00-1111-7222-8333-444455556666",
        ),
        "event-lead-exited": LeadExited(
            at=NOW,
            run_id=RUN,
            participant_ref="participant-001",
            status="exited",
            backend="tmux",
            exit_status=1,
            signal=None,
            exited_at=NOW,
            last_lines=("bye", ""),
            detail="exit status 1",
        ),
        "event-lead-exited-plain": LeadExited(
            at=NOW, run_id=RUN, participant_ref="participant-001", status="gone", exited_at=NOW
        ),
        "event-lead-stop-requested": LeadStopRequested(at=NOW, run_id=RUN),
    }


JSONL = {"runs-index"}


def written(name: str, document: Document) -> bytes:
    if name in JSONL or name.startswith("event-"):
        return document.jsonl()
    return document.to_bytes()


@pytest.mark.parametrize("name", sorted(documents()))
def test_a_document_writes_and_reads_its_pinned_bytes(name: str) -> None:
    document = documents()[name]
    pinned = (HERE / f"{name}.json").read_bytes()
    assert written(name, document) == pinned
    back = type(document).parse(orjson.loads(pinned))
    assert back == document
    assert written(name, back) == pinned


# Shared files someone edited: every key okstra does not own is written back as it was.
EXTRA = {"task-manifest-extra": TaskManifest, "project-extra": ProjectDocument}


@pytest.mark.parametrize("name", sorted(EXTRA))
def test_a_shared_file_keeps_the_keys_okstra_does_not_own(name: str) -> None:
    pinned = (HERE / f"{name}.json").read_bytes()
    data = orjson.loads(pinned)
    document = EXTRA[name].parse(data)
    assert document.to_bytes() == pinned
    assert document.dump() == data
    assert EXTRA[name].parse(document.dump()) == document


def extra_data() -> dict[str, dict[str, Any]]:
    """The `-extra` fixtures' data: the plain documents plus keys of people and tools."""
    task = orjson.loads(documents()["task-manifest"].to_bytes())
    task["reviewer"] = {"name": "Ana", "notes": ["check", None, 1.5]}
    task["task"]["jiraKey"] = "SHOP-12"
    task["workflow"]["owner"] = None
    task["roleExecutionIndex"][0]["ticket"] = [1, 2]
    task["roleExecutionIndex"].append({**task["roleExecutionIndex"][0], "ordinal": 2})
    project = orjson.loads(documents()["project"].to_bytes())
    project["modelDefaults"] = {"critic": ["openai/gpt-5"]}
    project["tasks"]["shop/checkout"]["pinned"] = True
    project["tasks"]["ops/deploy"] = {
        "lastRunId": "implementation-001",
        "lastTaskType": "implementation",
        "updatedAt": NOW,
        "color": "red",
    }
    return {"task-manifest-extra": task, "project-extra": project}


def test_upgrades_of_older_layouts_read_as_today() -> None:
    current = documents()["run-manifest"]
    data = orjson.loads(current.to_bytes())
    nested = {k: data.pop(k) for k in ("participants", "roleExecutions", "dynamicRoles")}
    nested["entryMode"] = data.pop("entryMode")
    assert RunManifest.parse({**data, "executionManifest": nested}) == current


@pytest.mark.parametrize("name", sorted(documents()))
def test_data_okstra_built_reads_as_its_document_without_checks(name: str) -> None:
    document = documents()[name]
    data = orjson.loads((HERE / f"{name}.json").read_bytes())
    if isinstance(document, RunInputs):
        return  # built from its request (`RunInputs.of`), never from data
    assert type(document).from_own(data) == document


@pytest.mark.parametrize("name", sorted(EXTRA))
def test_a_shared_file_built_by_okstra_keeps_every_key(name: str) -> None:
    pinned = (HERE / f"{name}.json").read_bytes()
    document = EXTRA[name].from_own(orjson.loads(pinned))
    assert document == EXTRA[name].parse(orjson.loads(pinned))
    assert document.to_bytes() == pinned


# Writes every pinned document in a process of its own, built in Python and from its
# data, then tells which of pydantic's modules that process imported.
WRITE_WITHOUT_CHECKS = """
import sys
from pathlib import Path
import orjson
from tests.prepare.test_document_bytes import documents, written
from okstra_core.documents.task import TaskManifest, ProjectDocument, RunsIndexRow
from okstra_core.documents.resume import ResumeDocument
from okstra_core.documents.run import LeadPromptMeta, RunManifest
from okstra_core.documents.task import TIMELINE_EVENTS

here = Path(sys.argv[1])
for name, document in documents().items():
    assert written(name, document) == (here / f"{name}.json").read_bytes(), name
kinds = {"run-manifest": RunManifest, "lead-prompt-meta": LeadPromptMeta,
         "resume": ResumeDocument, "task-manifest": TaskManifest,
         "project": ProjectDocument, "runs-index": RunsIndexRow}
count = 0
for path in sorted(here.glob("*.json")):
    pinned = path.read_bytes()
    data = orjson.loads(pinned)
    if path.stem.startswith("event-"):
        out = TIMELINE_EVENTS[data["event"]].from_own(data).jsonl()
    else:
        kind = next((k for k in sorted(kinds, key=len, reverse=True)
                     if path.stem.startswith(k)), None)
        if kind is None:
            continue
        document = kinds[kind].from_own(data)
        out = document.jsonl() if kind == "runs-index" else document.to_bytes()
    assert out == pinned, path
    count += 1
print(count, sorted(m for m in sys.modules if m.split(".")[0] in ("pydantic", "pydantic_core")))
"""


def test_writing_the_documents_imports_no_pydantic() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", WRITE_WITHOUT_CHECKS, str(HERE)],
        cwd=Path(__file__).parents[2],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    count, imported = proc.stdout.split(" ", 1)
    assert int(count) == len(list(HERE.glob("*.json"))) - 1  # all but run-inputs
    assert imported.strip() == "[]"
