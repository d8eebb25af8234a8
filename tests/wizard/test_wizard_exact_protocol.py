"""Exact at every step, from outside: the installed `okstra` under random PATH subsets.

Every bundled task type is walked through the headless protocol (`wizard init`,
`wizard step --answer`) under a random subset of the bundled providers' fake CLIs,
picking random *enabled* options: no prompt ever lacks an enabled option unless it is
`blocked` (and then it says what to install or enable); every disabled count names
the rule it breaks. A task type added as a profile file in a workspace is offered and
prepares with no code change.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from wizard_helpers import okstra

from okstra_core.environment import Environment
from tests.conftest import ALL_CLIS, write_fake_cli
from tests.prepare.conftest import FAKE_HELP

BUNDLED_TASK_TYPES = (
    "requirements-discovery",
    "error-analysis",
    "implementation-planning",
    "implementation",
    "final-verification",
    "release-handoff",
)
TEXT = {
    "task_group": "team",
    "task_id": "exact",
    "brief": "brief.md",
    "approved_plan": "plan.md",
    "directive": "keep it small",
    "related_tasks": "",
}
RULE_WORDS = ("providers", "models", "model for", "exclude-models-of", "distinct")


def _env(home: Path, bin_dir: Path, workspace: Path | None = None) -> Environment:
    env = {"OKSTRA_HOME": str(home), "PATH": f"{bin_dir}:/usr/bin:/bin"}
    if workspace is not None:
        env["OKSTRA_WORKSPACE"] = str(workspace)
    return Environment(env=env)


def _walk(
    env: Environment, state: Path, first: dict[str, Any], rng: random.Random
) -> dict[str, Any]:
    prompt = first
    for _ in range(40):
        kind = prompt["kind"]
        if kind in ("done", "blocked"):
            return prompt
        enabled = [o["value"] for o in prompt["options"] if "disabledReason" not in o]
        if kind == "pick":
            assert enabled, f"{prompt['id']}: a pick prompt with no enabled option"
            for option in prompt["options"]:
                reason = option.get("disabledReason")
                if reason is not None and prompt["meta"]["stepKind"] in ("role_count", "role_add"):
                    assert any(word in reason for word in RULE_WORDS), reason
            answer = "confirm" if prompt["id"] == "confirm" else rng.choice(enabled)
        else:
            answer = TEXT.get(prompt["id"], "x")
        code, data = okstra(env, "wizard", "step", "--state", str(state), f"--answer={answer}")
        assert code == 0, data
        prompt = data["next"]
    raise AssertionError("the walk did not end in 40 steps")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "brief.md").write_text("# Brief\n", encoding="utf-8")
    (root / "plan.md").write_text("+++\napproved = true\n+++\n# Plan\n", encoding="utf-8")
    return root


@pytest.mark.parametrize("task_type", BUNDLED_TASK_TYPES)
def test_random_path_subsets_never_leave_a_prompt_without_an_enabled_option(
    task_type: str, tmp_path: Path, okstra_home: Path, project: Path
) -> None:
    rng = random.Random(task_type)
    for round_ in range(1):
        clis = [c for c in ALL_CLIS if rng.random() < 0.5]
        if round_ == 0 and task_type == BUNDLED_TASK_TYPES[0]:
            clis = []  # nothing installed at all
        bin_dir = tmp_path / f"bin-{round_}"
        bin_dir.mkdir()
        for name in clis:
            write_fake_cli(bin_dir, name)
        env = _env(okstra_home, bin_dir)
        state = tmp_path / f"w{round_}.json"
        code, data = okstra(
            env,
            "wizard",
            "init",
            "--state",
            str(state),
            "--project-root",
            str(project),
            "--host",
            "terminal",
            "--task-type",
            task_type,
        )
        assert code == 0, data
        end = _walk(env, state, data["next"], rng)
        if end["kind"] == "blocked":
            assert end["meta"]["blocked"]["advice"], end
            assert "install or enable" in end["help"] or "found" in end["help"], end
            code, refused = okstra(env, "wizard", "step", "--state", str(state), "--answer=x")
            assert code == 0 and refused["ok"] is False and refused["current"]["kind"] == "blocked"
            continue
        assert end["meta"]["confirmed"] is True, (clis, end)
        code, outcome = okstra(env, "wizard", "outcome", "--state", str(state))
        assert code == 0, outcome


def _only_claude_error_analysis(env: Environment, state: Path, project: Path) -> dict[str, Any]:
    code, data = okstra(
        env,
        "wizard",
        "init",
        "--state",
        str(state),
        "--project-root",
        str(project),
        "--host",
        "terminal",
        "--task-type",
        "error-analysis",
    )
    assert code == 0, data
    prompt = data["next"]
    while not prompt["id"].startswith("role-count:"):
        answer = prompt["default"] or TEXT[prompt["id"]]
        code, data = okstra(env, "wizard", "step", "--state", str(state), f"--answer={answer}")
        assert code == 0, data
        prompt = data["next"]
    return prompt


def test_infeasible_counts_are_disabled_with_the_rule_and_the_default_falls_back(
    tmp_path: Path, okstra_home: Path, project: Path, fake_bin: Callable[..., Path]
) -> None:
    env = _env(okstra_home, fake_bin("claude"))
    state = tmp_path / "w.json"
    prompt = _only_claude_error_analysis(env, state, project)
    assert prompt["id"] == "role-count:analyser"
    options = {o["value"]: o.get("disabledReason") for o in prompt["options"]}
    assert options["1"] is None
    for n in ("2", "3"):
        assert options[n] is not None
        assert f"needs {n} providers for analyser (distinct-provider)" in options[n]
        assert "only claude is available" in options[n]
        assert (
            "codex (cli 'codex' not found on PATH — install: npm install -g @openai/codex)"
            in (options[n])
        )
    assert prompt["default"] == "1" and prompt["meta"]["feasibleRecommended"] == 1
    assert "The recommended 2 cannot be formed here" in prompt["help"]
    code, refused = okstra(env, "wizard", "step", "--state", str(state), "--answer=2")
    assert code == 0 and refused["ok"] is False and "needs 2 providers" in refused["error"]
    code, refused = okstra(env, "wizard", "step", "--state", str(state), "--answer=9")
    assert refused["ok"] is False and refused["error"].endswith("expected one of 1"), refused


def test_a_removed_cli_rewinds_the_first_answer_that_no_longer_holds(
    tmp_path: Path, okstra_home: Path, project: Path, fake_bin: Callable[..., Path]
) -> None:
    bin_dir = fake_bin("claude", "codex")
    env = _env(okstra_home, bin_dir)
    state = tmp_path / "w.json"
    prompt = _only_claude_error_analysis(env, state, project)
    answers = {"role-count:analyser": "2"}
    while prompt["kind"] != "done":
        answer = answers.get(prompt["id"]) or prompt["default"] or TEXT[prompt["id"]]
        code, data = okstra(env, "wizard", "step", "--state", str(state), f"--answer={answer}")
        assert code == 0, data
        prompt = data["next"]
    code, _ = okstra(env, "wizard", "outcome", "--state", str(state))
    assert code == 0
    (bin_dir / "codex").unlink()
    # The confirmed outcome is re-checked: it no longer holds.
    code, refused = okstra(env, "wizard", "outcome", "--state", str(state))
    assert code == 2 and "role-count:analyser" in refused["error"], refused
    # show and --back never exit 2 for a stale answer; the reason is shown.
    code, shown = okstra(env, "wizard", "show", "--state", str(state))
    assert code == 0, shown
    prompt = shown["prompt"]
    assert "role-count:analyser" not in [h["stepId"] for h in shown["history"]]
    assert prompt["id"] == "role-count:analyser", prompt
    stale = prompt["meta"]["stale"]
    assert stale["step"] == "role-count:analyser" and stale["answer"] == "2"
    assert "needs 2 providers for analyser" in stale["reason"]
    assert stale["reason"] in prompt["help"]
    code, back = okstra(env, "wizard", "step", "--state", str(state), "--back")
    assert code == 0, back


PROFILE = """+++
task_type = "security-review"
title = "Security review"
summary = "Look for ways in."

[[roles]]
role = "analyser"
duty = "threat-modelling"
min = 1
max = 2
recommended = 1
description = "Finds what an attacker would try."

[[roles]]
role = "report-writer"
duty = "report"
min = 1
max = 1
+++
# Security review

Lead a security review of the project.
"""


def test_a_new_task_type_is_a_profile_file_in_the_workspace(
    tmp_path: Path, okstra_home: Path, project: Path, fake_bin: Callable[..., Path]
) -> None:
    workspace = tmp_path / "ws"
    (workspace / "profiles").mkdir(parents=True)
    (workspace / "profiles" / "security-review.md").write_text(PROFILE, encoding="utf-8")
    env = _env(okstra_home, fake_bin(), workspace)
    state = tmp_path / "w.json"
    code, data = okstra(
        env,
        "wizard",
        "init",
        "--state",
        str(state),
        "--project-root",
        str(project),
        "--host",
        "terminal",
    )
    assert code == 0, data
    prompt = data["next"]
    seen_task_types: list[str] = []
    while prompt["kind"] != "done":
        if prompt["id"] == "task_type":
            seen_task_types = [o["value"] for o in prompt["options"]]
            answer = "security-review"
        else:
            answer = prompt["default"] or TEXT[prompt["id"]]
        code, data = okstra(env, "wizard", "step", "--state", str(state), f"--answer={answer}")
        assert code == 0, data
        prompt = data["next"]
    assert "security-review" in seen_task_types
    assert seen_task_types[: len(BUNDLED_TASK_TYPES)] == list(BUNDLED_TASK_TYPES)
    code, data = okstra(
        env, "prepare", "--state", str(state), "--launch", "none", FAKE_CLI_HELP=FAKE_HELP
    )
    assert code == 0, data
    run_dir = Path(data["runDir"])
    assert run_dir.name == "security-review-001"
    assert "Lead a security review" in "".join(
        p.read_text(encoding="utf-8") for p in run_dir.rglob("*.md")
    )
