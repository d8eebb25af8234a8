"""Earlier files as the earlier okstra wrote them, through the installed `okstra`.

Each resumes (at confirm, when it was confirmed) and prepares; the source and every
companion the earlier okstra wrote stay byte-identical; what cannot be used is named.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from legacy_support import FAKE_HELP, FIXTURES

HOME_PROJECT = "/home/dev/shop"
PLAN_DIR = ".okstra/tasks/checkout/chk-114/runs/implementation-planning-001"
# Stage 1 writes the separator as an ASCII `-`, stage 2 declares nothing (left alone),
# stage 3 is exempt; data.json repeats stage 1 in its top-level `conformanceTests`.
PLAN = """---
approved: true
---
# Plan

## Stage 1: read the ledger
Conformance tests: stage-1 - <task_root>/qa/scripts/stage-1.sh (requires=[db])

## Stage 2: notes for the release

## Stage 3: wiring
Conformance exemption: configuration only
"""


def _okstra(*args: str) -> tuple[dict[str, Any], int]:
    exe = Path(sys.executable).parent / "okstra"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "okstra_tui"]
    done = subprocess.run(
        [*cmd, *args], capture_output=True, env=dict(os.environ), timeout=120, check=False
    )
    assert done.stdout, done.stderr.decode()
    result: dict[str, Any] = json.loads(done.stdout)
    return result, done.returncode


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(autouse=True)
def _cli_help(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_CLI_HELP", FAKE_HELP)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    brief = root / "docs" / "briefs" / "chk-114.md"
    brief.parent.mkdir(parents=True)
    brief.write_text("# chk-114\n\nGuest checkout charges twice.\n", encoding="utf-8")
    plan_dir = root / PLAN_DIR
    plan_dir.mkdir(parents=True)
    (plan_dir / "final-report.md").write_text(PLAN, encoding="utf-8")
    declaration = "Conformance tests: stage-1 — <task_root>/qa/scripts/stage-1.sh (requires=[db])"
    (plan_dir / "data.json").write_text(
        json.dumps(
            {
                "approved": True,
                "stages": [{"stage": 1}, {"stage": 2}, {"stage": 3}],
                "conformanceTests": [{"stage": 1, "declaration": declaration}],
            }
        ),
        encoding="utf-8",
    )
    return root


def _place(name: str, project: Path) -> Path:
    path = project.parent / "old-wizards" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text((FIXTURES / name).read_text().replace(HOME_PROJECT, str(project)))
    return path


@pytest.mark.usefixtures("fake_path")
def test_a_full_earlier_implementation_file_resumes_and_prepares_its_plan(
    project: Path,
) -> None:
    source = _place("v1_full_impl_staged.json", project)
    before = _sha(source)
    shown, code = _okstra("wizard", "show", "--state", str(source))
    # Saved confirmed: confirmed here too once its answers are re-checked.
    assert code == 0 and shown["prompt"]["kind"] == "done", shown
    assert any("selected_stages" in note for note in shown["notes"]), shown["notes"]
    outcome, code = _okstra("wizard", "outcome", "--state", str(source))
    assert code == 0, outcome
    request = outcome["request"]
    assert (request["taskGroup"], request["taskId"]) == ("checkout", "chk-114")
    assert request["roleModels"]["leader"] == ["claude/sonnet-4.6"]
    assert request["roleModels"]["implementer"] == ["codex/gpt-5.6"]
    assert request["roleModels"]["report-writer"] == ["claude/haiku-4.5"]
    assert outcome["orchestration"] == {"chainStages": [1, 2, 3]}
    # The earlier renderArgs keys, beside the new ones (never in renderArgv).
    args = outcome["renderArgs"]
    assert (args["stage"], args["stages"]) == ("1", "1,2,3")
    assert args["task-brief"] == args["brief"] and "base-ref" not in args
    assert not any(a.startswith(("--stage", "--task-brief")) for a in outcome["renderArgv"])
    assert outcome["persistActions"][0]["path"] == str(
        source.with_name(source.stem + ".runs.jsonl")
    )
    dry, code = _okstra("prepare", "--state", str(source), "--dry-run")
    assert code == 0 and dry["ok"], dry
    assert _sha(source) == before


@pytest.mark.usefixtures("fake_path")
@pytest.mark.parametrize("older_name", [True, False])
def test_an_earlier_companion_that_does_not_convert_is_skipped_and_kept(
    project: Path, older_name: bool
) -> None:
    source = _place("v1_confirmed_rd.json", project)
    digest = _sha(source)
    earlier = {
        **json.loads(source.read_text()),
        "executionIdentityVersion": 2,
        "roleCounts": {"analyser": "two"},
        "roleModels": {"leader": ["claude/opus-4.6"]},
        "roleSelectionOrder": [],
        "legacySource": {"path": str(source.resolve()), "sha256": digest},
    }
    for field in ("lead_provider", "lead_model", "claude_model", "codex_model", "executor"):
        earlier.pop(field, None)
    for field in ("antigravity_model", "grok_model", "kimi_model", "critic"):
        earlier.pop(field, None)
    for field in ("workers_override", "report_writer_provider", "report_writer_model"):
        earlier.pop(field, None)
    name = f"{source.name}.v2.json" if older_name else f"{source.name}.v2.{digest}.json"
    companion = source.with_name(name)
    companion.write_text(json.dumps(earlier, indent=2))
    kept = _sha(companion)

    shown, code = _okstra("wizard", "show", "--state", str(source))
    assert code == 0 and shown["ok"], shown
    assert shown["prompt"]["kind"] == "done"
    skipped = [n for n in shown["notes"] if str(companion) in n]
    assert skipped and "roleCounts.analyser" in skipped[0] and "skipped" in skipped[0]
    assert Path(shown["state"]) != companion  # converted afresh into a free name
    assert _sha(companion) == kept and _sha(source) == digest
