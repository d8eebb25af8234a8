"""The outcome's `orchestration` and `persistActions` blocks, through the installed `okstra`.

`orchestration.chainStages` lists the approved plan's stages in the plan's order (the
one run carries them out one after another), empty without a plan; `persistActions`
names the file `okstra prepare --state` appends the run to, and that prepare writes it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from wizard_helpers import ANSWERS, okstra

from okstra_core.environment import Environment
from tests.prepare.conftest import FAKE_HELP

PLAN = """+++
approved = true
+++
# Plan

## Stage 2: schema first

Conformance tests: stage-2 - <task_root>/qa/scripts/stage-2.sh (requires=[db])

## Stage 1: then the code

Conformance exemption: documentation only

### Stage notes (not a stage)

## Stage 3: wiring
"""


def _drive(env: Environment, state: str, overrides: dict[str, str]) -> dict[str, Any]:
    code, shown = okstra(env, "wizard", "step", "--state", state, "--no-submit")
    assert code == 0 and shown["ok"], shown
    prompt = shown["next"]
    for _ in range(60):
        if prompt["kind"] == "done":
            break
        answer = overrides.get(prompt["id"]) or prompt["default"] or ANSWERS[prompt["id"]]
        code, data = okstra(env, "wizard", "step", "--state", state, "--answer", str(answer))
        assert code == 0 and data["ok"], data
        prompt = data["next"]
    code, outcome = okstra(env, "wizard", "outcome", "--state", state)
    assert code == 0 and outcome["ok"], outcome
    return outcome


def _init(env: Environment, project: Path, name: str, task_type: str) -> str:
    code, data = okstra(
        env,
        "wizard",
        "init",
        "--state",
        name,
        "--project-root",
        str(project),
        "--task-type",
        task_type,
    )
    assert code == 0 and data["ok"], data
    return str(data["state"])


def test_implementation_outcome_chains_the_plan_stages_in_plan_order(
    env: Environment, project: Path
) -> None:
    (project / "staged.md").write_text(PLAN, encoding="utf-8")
    state = _init(env, project, "impl", "implementation")
    outcome = _drive(env, state, {"approved_plan": "staged.md"})
    assert outcome["request"]["approvedPlan"] == "staged.md"
    assert outcome["orchestration"] == {"chainStages": [2, 1, 3]}
    runs = Path(state).with_name(Path(state).stem + ".runs.jsonl")
    assert outcome["persistActions"] == [
        {
            "action": "record-setup-run",
            "path": str(runs),
            "when": "after-prepare",
            "by": f"okstra prepare --state {state}",
        }
    ]
    schema = okstra(env, "wizard", "schema")[1]["schemas"]["outcome"]
    assert {"orchestration", "persistActions"} <= set(schema["properties"])


def test_without_a_plan_nothing_is_chained_and_prepare_writes_the_named_file(
    env: Environment, project: Path
) -> None:
    state = _init(env, project, "rd", "requirements-discovery")
    outcome = _drive(env, state, {})
    assert outcome["orchestration"] == {"chainStages": []}
    [action] = outcome["persistActions"]
    target = Path(action["path"])
    # The same fake CLIs both times: a check's verdict is kept for the model lists.
    code, dry = okstra(
        env, "prepare", "--state", state, "--dry-run", "--launch", "none", FAKE_CLI_HELP=FAKE_HELP
    )
    assert code == 0, dry
    assert not target.exists()  # a dry run writes no run, so records none
    code, done = okstra(
        env, "prepare", "--state", state, "--launch", "none", FAKE_CLI_HELP=FAKE_HELP
    )
    assert code == 0 and done["ok"], done
    [row] = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    assert row["runId"] == done["runId"]
