"""Grouped prompts for a host with a multi-question tool, and a stable progress total."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "legacy"))
from compat2_support import make_project, okstra

GROUP = ["role-count:analyser", "role-add:verifier", "role-add:critic"]


@pytest.fixture
def project(tmp_path: Path, fake_path: Path) -> Path:
    return make_project(tmp_path / "shop")


def _step(state: Path, *args: str) -> dict[str, Any]:
    moved, code, _ = okstra("wizard", "step", "--state", str(state), *args)
    assert code == 0, moved
    return moved


def _to_counts(project: Path, state: Path, *init: str) -> dict[str, Any]:
    created, code, _ = okstra(
        "wizard",
        "init",
        "--project-root",
        str(project),
        "--state",
        str(state),
        "--task-type",
        "error-analysis",
        *init,
    )
    assert code == 0, created
    moved: dict[str, Any] = {}
    for answer in ("new", "checkout", "chk-1", "docs/brief.md"):
        moved = _step(state, "--answer", answer)
        assert moved["ok"], moved
    return moved["next"]


def test_count_prompts_are_grouped_and_answered_together(project: Path, tmp_path: Path) -> None:
    state = tmp_path / "g.json"
    group = _to_counts(project, state, "--available-functions", "AskUserQuestion,Bash")
    assert group["kind"] == "pick_group" and group["id"] == GROUP[0]
    assert [q["id"] for q in group["questions"]] == GROUP
    assert all(q["kind"] == "pick" and q["options"] and q["label"] for q in group["questions"])
    assert json.loads(state.read_text())["available_functions"] == ["AskUserQuestion", "Bash"]

    before = state.read_bytes()
    bad = _step(state, "--answer", json.dumps({GROUP[0]: "3", GROUP[1]: "9", GROUP[2]: "1"}))
    assert bad["ok"] is False and bad["error"].startswith("role-add:verifier: ")
    assert bad["current"]["kind"] == "pick_group"
    assert state.read_bytes() == before  # nothing saved: one answer was bad
    unknown = _step(state, "--answer", json.dumps({"role-model:leader:1": "x"}))
    assert unknown["ok"] is False and "role-model:leader:1" in unknown["error"]
    missing = _step(state, "--answer", json.dumps({GROUP[0]: "3"}))
    assert missing["ok"] is False and GROUP[1] in missing["error"]
    assert state.read_bytes() == before

    done = _step(state, "--answer", json.dumps({GROUP[0]: "3", GROUP[1]: "0", GROUP[2]: 1}))
    assert done["ok"], done
    answered = {e["step"]: e["answer"] for e in json.loads(state.read_text())["answered"]}
    assert (answered[GROUP[0]], answered[GROUP[1]], answered[GROUP[2]]) == ("3", "0", "1")
    assert done["next"]["kind"] == "pick" and done["next"]["id"].startswith("role-model:")


def test_grouped_prompts_stay_answerable_one_by_one(project: Path, tmp_path: Path) -> None:
    state = tmp_path / "g.json"
    _to_counts(project, state, "--available-functions", "AskUserQuestion")
    first = _step(state, "--answer", "2")
    assert first["ok"] and first["next"]["kind"] == "pick_group"
    assert [q["id"] for q in first["next"]["questions"]] == GROUP[1:]
    second = _step(state, "--answer", "0", "--step", GROUP[1])
    assert second["ok"] and second["next"]["id"] == GROUP[2]
    assert second["next"]["kind"] == "pick"  # one question left: no group


def test_host_context_declares_the_functions(project: Path, tmp_path: Path) -> None:
    state = tmp_path / "g.json"
    context = json.dumps(
        {
            "hostId": "terminal",
            "availableFunctions": ["AskUserQuestion"],
            "extra": 1,
            # Extra keys inside currentModel are ignored like those of the top level.
            "currentModel": {"modelRef": "claude/opus-4.6", "build": "2026-11"},
        }
    )
    group = _to_counts(project, state, "--host-session-context-json", context)
    assert group["kind"] == "pick_group"


def test_without_a_multi_question_tool_there_is_no_group(project: Path, tmp_path: Path) -> None:
    state = tmp_path / "g.json"
    prompt = _to_counts(project, state, "--available-functions", "Bash")
    assert prompt["kind"] == "pick" and "questions" not in prompt


def test_progress_total_is_stable_while_taking_defaults(project: Path, tmp_path: Path) -> None:
    state = tmp_path / "p.json"
    prompt = _to_counts(project, state)
    totals = []
    for _ in range(30):
        shown, code, _ = okstra("wizard", "show", "--state", str(state))
        assert code == 0
        totals.append((shown["progress"]["answered"], shown["progress"]["total"]))
        if prompt["id"] == "confirm":
            break
        assert prompt.get("default") is not None, prompt
        prompt = _step(state, "--answer", prompt["default"])["next"]
    assert prompt["id"] == "confirm"
    assert len({total for _answered, total in totals}) == 1, totals
    assert totals[-1][0] + 1 == totals[-1][1]  # only the confirmation is left


@pytest.mark.slow
def test_a_role_rewind_keeps_the_directive_and_returns_to_confirm(
    project: Path, tmp_path: Path
) -> None:
    state = tmp_path / "r.json"
    prompt = _to_counts(project, state)
    while prompt["id"] != "confirm":
        if prompt["id"] == "directive_pick":
            prompt = _step(state, "--answer", "write")["next"]
            prompt = _step(state, "--answer", "look at the cart")["next"]
            continue
        prompt = _step(state, "--answer", prompt["default"])["next"]
    rewound = _step(state, "--rewind", "role-count:analyser")
    assert rewound["next"]["id"] == "role-count:analyser"
    kept = {e["step"]: e["answer"] for e in json.loads(state.read_text())["answered"]}
    assert kept["directive"] == "look at the cart" and "confirm" not in kept
    prompt = _step(state, "--answer", "3")["next"]
    while prompt["id"] != "confirm":
        assert prompt["id"].startswith("role-"), prompt["id"]
        prompt = _step(state, "--answer", prompt["default"])["next"]
    assert json.loads(state.read_text())["directive"] == "look at the cart"
