"""One builder per document of a run; `plan_run` plans the run's files from their records.

Each builder returns the document's record; the bytes `plan_run` plans for a file are
exactly that record's bytes, in the order the files are written.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from okstra_core.documents.inputs import RunInputs
from okstra_core.documents.run import LeadPromptMeta, RunManifest
from okstra_core.documents.task import ProjectDocument, RunPrepared, RunsIndexRow, TaskManifest
from okstra_core.environment import Environment
from okstra_core.paths import user_dirs
from okstra_core.prepare import run_documents as docs
from okstra_core.prepare.lead_prompt import lead_prompt, lead_prompt_meta
from okstra_core.prepare.resolve import resolve_request
from tests.prepare.prepare_support import request_of

NOW = datetime(2026, 11, 30, 16, 40, tzinfo=UTC)


def _env() -> Environment:
    return Environment(env=dict(os.environ), now=lambda: NOW)


def test_plan_run_writes_each_builders_record(project: Path, fake_path: Path) -> None:
    env = _env()
    resolved = resolve_request(request_of(project, directive="Be brief."), env)
    run = docs.plan_run(resolved, seq=3, environment=env, launch_plan=None)
    layout = docs.run_layout(resolved, seq=3, now="2026-11-30T16:40:00+00:00", launch_plan=None)
    assert run.run_id == layout.run_id == "requirements-discovery-003"
    cache = user_dirs(env.env).cache

    inputs = docs.run_inputs(resolved, layout)
    manifest = docs.run_manifest(resolved, layout, None)
    prompt = lead_prompt(resolved, layout, env).encode("utf-8")
    meta = lead_prompt_meta(resolved, layout, prompt)
    task = docs.task_manifest(resolved, layout, cache)
    event = docs.run_prepared(resolved, layout)
    project_doc = docs.project_document(resolved, layout, cache)
    row = docs.runs_index_row(resolved, layout)
    for record, kind in (
        (inputs, RunInputs),
        (manifest, RunManifest),
        (meta, LeadPromptMeta),
        (task, TaskManifest),
        (event, RunPrepared),
        (project_doc, ProjectDocument),
        (row, RunsIndexRow),
    ):
        assert isinstance(record, kind)

    expected = [
        (layout.paths.run_inputs, inputs.to_bytes(), "immutable"),
        (layout.paths.run_manifest, manifest.to_bytes(), "write"),
        (layout.paths.lead_prompt, prompt, "write"),
        (layout.paths.lead_prompt_meta, meta.to_bytes(), "write"),
        (layout.paths.task_manifest, task.to_bytes(), "write"),
        (
            layout.paths.task_index,
            docs.task_index(resolved, layout, task, env).encode("utf-8"),
            "write",
        ),
        (layout.paths.timeline, event.jsonl(), "append"),
        (project / ".okstra/project.json", project_doc.to_bytes(), "upsert"),
        (user_dirs(env.env).runs_index, row.jsonl(), "append"),
    ]
    assert [(f.path, f.content, f.action) for f in run.files] == expected
    # The documents agree with one another: one layout, one set of facts.
    assert manifest.paths == layout.rel and task.latest_run.run_id == event.run_id
    assert meta.prompt_path == layout.rel["leadPrompt"] and row.run_dir == str(layout.run_dir)
    assert [e.run_id for e in task.role_execution_index] == [run.run_id] * len(
        manifest.role_executions
    )
