"""The headless JSON protocol, run as the installed `okstra` command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from wizard_helpers import ANSWERS, cli_env, okstra

from okstra_core.environment import Environment
from okstra_core.store import FileLock


def _answer(prompt: dict[str, Any]) -> str:
    if prompt["default"] is not None:
        return str(prompt["default"])
    return ANSWERS[prompt["id"]]


def _drive(env: Environment, state: str, overrides: dict[str, str] | None = None) -> list[str]:
    """Answer every prompt, each in a new process (a kill between steps loses nothing)."""
    overrides = overrides or {}
    code, shown = okstra(env, "wizard", "step", "--state", state, "--no-submit")
    assert code == 0 and shown["ok"], shown
    prompt, seen = shown["next"], []
    while prompt["kind"] != "done":
        seen.append(prompt["id"])
        code, data = okstra(
            env,
            "wizard",
            "step",
            "--state",
            state,
            "--answer",
            overrides.get(prompt["id"], _answer(prompt)),
        )
        assert code == 0 and data["ok"], data
        assert isinstance(data["echo"], str)
        prompt = data["next"]
    return seen


@pytest.mark.parametrize(
    ("host", "mode", "first_role_step"),
    [
        ("terminal", "spawn-process", "role-count:analyser"),
        ("claude-code", "current-session", "leader-session"),
    ],
)
def test_whole_setup_in_both_entry_modes(
    env: Environment, project: Path, host: str, mode: str, first_role_step: str
) -> None:
    code, data = okstra(
        env,
        "wizard",
        "init",
        "--state",
        "w1",
        "--project-root",
        str(project),
        "--host",
        host,
        "--entry-mode",
        mode,
    )
    assert code == 0 and data["ok"] and data["next"]["id"] == "task_pick"
    state = data["state"]
    assert state.endswith("/wizards/w1.json")
    seen = _drive(env, "w1")
    assert first_role_step in seen and seen[-1] == "confirm"
    code, outcome = okstra(env, "wizard", "outcome", "--state", "w1")
    assert code == 0 and outcome["ok"]
    argv = outcome["renderArgv"]
    assert outcome["request"]["host"]["entryMode"] == mode
    assert (f"--entry-mode={mode}" in argv) == (mode != "spawn-process")
    assert set(outcome) >= {"request", "renderArgs", "renderArgv", "confirmationText", "provenance"}
    code, shown = okstra(env, "wizard", "show", "--state", state)
    assert shown["prompt"]["kind"] == "done" and shown["confirmation"]["lines"]
    assert [h["stepId"] for h in shown["history"]][-1] == "confirm"


def test_refused_answer_exits_zero_and_changes_nothing(env: Environment, project: Path) -> None:
    code, data = okstra(env, "wizard", "init", "--state", "w", "--project-root", str(project))
    path = Path(data["state"])
    before = path.read_bytes()
    code, data = okstra(env, "wizard", "step", "--state", "w", "--answer", "nope")
    assert code == 0 and data["ok"] is False and "not an option" in data["error"]
    assert data["current"]["id"] == "task_pick"
    assert path.read_bytes() == before


def test_bad_files_exit_two_and_stay_unchanged(
    env: Environment, project: Path, tmp_path: Path
) -> None:
    okstra(env, "wizard", "init", "--state", "w", "--project-root", str(project))
    code, data = okstra(env, "wizard", "step", "--state", "w", "--answer", "new")
    path = Path(okstra(env, "wizard", "show", "--state", "w")[1]["state"])
    for payload in (
        b"\xff\xfe{}",
        path.read_bytes()[:40],
        path.read_bytes().replace(b'"roleCounts": {}', b'"roleCounts": {"a": true}'),
    ):
        path.write_bytes(payload)
        for command in (["step", "--answer", "new"], ["show"], ["outcome"], ["answers"]):
            code, data = okstra(env, "wizard", *command, "--state", "w")
            assert code == 2 and data["ok"] is False and str(path) in data["error"], data
        assert path.read_bytes() == payload
    code, data = okstra(env, "wizard", "step", "--state", "w")
    assert code == 2 and "required" in data["error"]
    code, data = okstra(env, "wizard", "init", "--project-root", str(tmp_path / "missing"))
    assert code == 2


def test_concurrent_step_fails_fast(env: Environment, project: Path) -> None:
    code, data = okstra(env, "wizard", "init", "--state", "w", "--project-root", str(project))
    path = Path(data["state"])
    before = path.read_bytes()
    with FileLock(path):
        code, data = okstra(env, "wizard", "step", "--state", "w", "--answer", "new")
        assert code == 2 and "state file is in use (pid " in data["error"]
        assert path.read_bytes() == before
        code, data = okstra(env, "wizard", "show", "--state", "w")  # readers never wait
        assert code == 0 and data["prompt"]["id"] == "task_pick"
        # Asking for the current prompt changes nothing, so it takes no lock either.
        code, data = okstra(env, "wizard", "step", "--state", "w", "--no-submit")
        assert code == 0 and data["next"]["id"] == "task_pick", data
        assert path.read_bytes() == before
    assert okstra(env, "wizard", "step", "--state", "w", "--answer", "new")[0] == 0


def test_two_processes_stepping_at_once(env: Environment, project: Path) -> None:
    okstra(env, "wizard", "init", "--state", "w", "--project-root", str(project))
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "okstra_tui",
                "wizard",
                "step",
                "--state",
                "w",
                "--answer",
                "new",
                "--step",
                "task_pick",
            ],
            stdout=subprocess.PIPE,
            env=cli_env(env),
        )
        for _ in range(2)
    ]
    results = [json.loads(p.communicate(timeout=60)[0]) for p in procs]
    ok = [r for r in results if r["ok"]]
    assert len(ok) == 1, results  # one wins; the other is "in use" or sees the new state
    for r in results:
        assert r["ok"] or "in use" in r["error"] or "asks task_group" in r["error"]
    _code, shown = okstra(env, "wizard", "show", "--state", "w")
    assert [h["stepId"] for h in shown["history"]] == ["task_pick"]


def _revision(env: Environment, state: str) -> int:
    code, shown = okstra(env, "wizard", "show", "--state", state)
    assert code == 0, shown
    return int(shown["revision"])


def _fresh_revision(env: Environment, project: Path) -> int:
    """The revision of a state file `wizard init` just created (nothing answered)."""
    okstra(env, "wizard", "init", "--state", "fresh", "--project-root", str(project))
    return _revision(env, "fresh")


def test_answers_file_replays_to_the_same_outcome(
    env: Environment, project: Path, tmp_path: Path
) -> None:
    okstra(env, "wizard", "init", "--state", "a", "--project-root", str(project))
    _drive(env, "a", {"role-count:analyser": "3", "directive_pick": "write"})
    code, answers = okstra(env, "wizard", "answers", "--state", "a")
    assert code == 0 and answers["answers"][0] == {"step": "task_pick", "answer": "new"}
    file = tmp_path / "answers.json"
    file.write_text(json.dumps(answers["answers"]), encoding="utf-8")
    code, data = okstra(
        env,
        "wizard",
        "init",
        "--state",
        "b",
        "--project-root",
        str(project),
        "--answers",
        str(file),
    )
    assert code == 0 and data["ok"] and data["next"]["kind"] == "done"
    assert data["applied"] == len(answers["answers"])
    # A replay is one transaction: the state file is written once, after every answer.
    assert _revision(env, "b") == _fresh_revision(env, project) + 1
    first = okstra(env, "wizard", "outcome", "--state", "a")[1]
    second = okstra(env, "wizard", "outcome", "--state", "b")[1]
    assert first["renderArgv"] == second["renderArgv"]
    # The whole {"ok", "answers"} document is accepted as well.
    file.write_text(json.dumps(answers), encoding="utf-8")
    assert okstra(
        env,
        "wizard",
        "init",
        "--state",
        "c",
        "--project-root",
        str(project),
        "--answers",
        str(file),
    )[1]["ok"]


def test_answers_replay_stops_at_first_refused(
    env: Environment, project: Path, tmp_path: Path
) -> None:
    file = tmp_path / "answers.json"
    file.write_text(
        json.dumps(
            [
                {"step": "task_pick", "answer": "new"},
                {"step": "task_group", "answer": "g"},
                {"step": "task_id", "answer": "../escape"},
                {"step": "brief", "answer": "brief.md"},
            ]
        ),
        encoding="utf-8",
    )
    code, data = okstra(
        env,
        "wizard",
        "init",
        "--state",
        "r",
        "--project-root",
        str(project),
        "--answers",
        str(file),
    )
    # A replay that does not reproduce its setup exits 2 (the state kept, and said).
    assert code == 2 and data["ok"] is False and data["applied"] == 2
    assert data["error"].startswith("answers[2] (task_id)") and data["current"]["id"] == "task_id"
    assert "is kept at step 'task_id'" in data["error"]
    # The answers before the refused one are saved, in one write; the refused one left
    # no trace.
    shown = okstra(env, "wizard", "show", "--state", "r")[1]
    assert [h["answer"] for h in shown["history"]] == ["new", "g"]
    assert shown["revision"] == _fresh_revision(env, project) + 1
    file.write_text(json.dumps([{"step": "task_pick", "answer": 1}]), encoding="utf-8")
    code, data = okstra(
        env,
        "wizard",
        "init",
        "--state",
        "s",
        "--project-root",
        str(project),
        "--answers",
        str(file),
    )
    assert code == 2 and "[0]" in data["error"]


def test_rewind_back_list_schema(env: Environment, project: Path) -> None:
    okstra(env, "wizard", "init", "--state", "w", "--project-root", str(project))
    _drive(env, "w")
    code, data = okstra(env, "wizard", "step", "--state", "w", "--rewind", "role-model:analyser:1")
    assert code == 0 and data["next"]["id"] == "role-model:analyser:1"
    assert data["next"]["default"] is not None
    code, data = okstra(env, "wizard", "step", "--state", "w", "--back")
    assert data["next"]["id"] == "role-model:leader:1"
    code, data = okstra(env, "wizard", "step", "--state", "w", "--rewind", "confirm")
    assert code == 0 and data["ok"] is False and "not been answered" in data["error"]
    okstra(env, "wizard", "init", "--state", "x", "--project-root", str(project))
    code, data = okstra(env, "wizard", "list")
    assert code == 0 and [Path(w["path"]).name for w in data["wizards"]] == ["x.json", "w.json"]
    code, data = okstra(env, "wizard", "schema")
    assert set(data["schemas"]) == {"prompt", "answers", "outcome"}
    assert "echoTemplate" in data["schemas"]["prompt"]["properties"]


def test_headless_step_imports_neither_textual_nor_jinja2(env: Environment, project: Path) -> None:
    okstra(env, "wizard", "init", "--state", "w", "--project-root", str(project))
    script = (
        "import sys\n"
        "from okstra_tui.entry import main\n"
        "main(['wizard', 'step', '--state', 'w', '--answer', 'new'])\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'jinja2'))\n"
        "sys.stderr.write('LOADED=' + ','.join(bad))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=cli_env(env), timeout=60
    )
    assert json.loads(proc.stdout)["ok"]
    assert proc.stderr.strip() == "LOADED=", proc.stderr
