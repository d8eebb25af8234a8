"""Answers that no longer hold after a profile, provider or availability change.

Real files: a workspace profile edited between loads, a config default that cannot run,
CLIs removed from PATH. Loading never fails; the first answer that no longer holds is
rewound with its reason; a removed role is never dropped silently; progress is exact
once the counts are known.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from wizard_helpers import ANSWERS, run_through

from okstra_core.environment import Environment
from okstra_core.errors import OkstraError, StateFileError
from okstra_core.paths import user_dirs
from okstra_core.session import Wizard

BUNDLED = Path(__file__).resolve().parents[2] / "prompts" / "profiles"


def _workspace_env(okstra_home: Path, bin_dir: Path, workspace: Path) -> Environment:
    return Environment(
        env={
            "OKSTRA_HOME": str(okstra_home),
            "PATH": f"{bin_dir}:/usr/bin:/bin",
            "OKSTRA_WORKSPACE": str(workspace),
        }
    )


def _edit_profile(workspace: Path, old: str, new: str) -> None:
    path = workspace / "profiles" / "error-analysis.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = (
        path.read_text("utf-8")
        if path.exists()
        else (BUNDLED / "error-analysis.md").read_text("utf-8")
    )
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _confirmed(env: Environment, path: Path, project: Path, overrides: dict[str, str]) -> Wizard:
    wizard = Wizard.init(
        path, project, host="terminal", task_type="error-analysis", environment=env
    )
    end = run_through(wizard, overrides)
    assert end.kind == "done" and wizard.state.confirmed is True
    return wizard


def test_a_lowered_maximum_rewinds_the_count_with_the_reason(
    tmp_path: Path, okstra_home: Path, bin_dir: Path, project: Path
) -> None:
    workspace = tmp_path / "ws"
    _edit_profile(workspace, "max = 3\nrecommended = 2", "max = 3\nrecommended = 2")
    env = _workspace_env(okstra_home, bin_dir, workspace)
    path = tmp_path / "w.json"
    _confirmed(env, path, project, {"role-count:analyser": "3"})
    _edit_profile(workspace, "max = 3\nrecommended = 2", "max = 2\nrecommended = 2")

    later = Wizard.open(path, environment=env)
    prompt = later.prompt()
    assert prompt.id == "role-count:analyser", prompt
    stale = prompt.meta.get("stale")
    assert stale is not None and stale["step"] == "role-count:analyser" and stale["answer"] == "3"
    assert "no longer an option" in stale["reason"]
    assert stale["reason"] in prompt.help
    # Read-only until the next step writes it; then the note is kept until an answer.
    assert later.state.role_counts["analyser"] == 3
    assert later.refresh().meta.get("stale") == stale
    assert Wizard.open(path, environment=env).state.stale is not None
    later.submit("2")
    assert Wizard.open(path, environment=env).state.stale is None


def test_a_removed_role_is_rewound_not_dropped_silently(
    tmp_path: Path, okstra_home: Path, bin_dir: Path, project: Path
) -> None:
    workspace = tmp_path / "ws"
    _edit_profile(workspace, "max = 3\nrecommended = 2", "max = 3\nrecommended = 2")
    env = _workspace_env(okstra_home, bin_dir, workspace)
    path = tmp_path / "w.json"
    _confirmed(env, path, project, {"role-add:critic": "1"})
    assert Wizard.open(path, environment=env).state.role_counts.get("critic") == 1
    _edit_profile(
        workspace,
        """[[roles]]
role = "critic"
duty = "hypothesis-critic"
min = 0
max = 1
exclude_models_of = ["analyser"]
description = "Attacks the leading hypothesis with a model no analyser uses."
""",
        "",
    )
    later = Wizard.open(path, environment=env)
    prompt = later.prompt()
    stale = prompt.meta.get("stale")
    assert stale is not None and stale["step"] == "role-add:critic", prompt
    assert "no longer part of task type 'error-analysis'" in stale["reason"]
    assert prompt.kind == "pick" and any(o.selectable for o in prompt.options)
    assert "critic" not in [h.step_id for h in later.history()]
    with pytest.raises(OkstraError, match="role-add:critic"):
        later.outcome()


def test_an_unavailable_configured_default_is_reported_at_the_step_it_affects(
    tmp_path: Path, okstra_home: Path, fake_bin: Callable[..., Path], project: Path
) -> None:
    bin_dir = fake_bin("claude", "gemini")
    config = user_dirs({"OKSTRA_HOME": str(okstra_home)}).config_file
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps({"modelDefaults": {"leader": ["codex/gpt-5.6"]}}), "utf-8")
    env = Environment(env={"OKSTRA_HOME": str(okstra_home), "PATH": f"{bin_dir}:/usr/bin:/bin"})
    wizard = Wizard.init(
        tmp_path / "w.json", project, host="terminal", task_type="error-analysis", environment=env
    )
    prompt = run_through(wizard, stop="role-model:leader:1")
    assert prompt.id == "role-model:leader:1"
    notes = prompt.meta.get("notes", [])
    assert any("codex/gpt-5.6" in n and "'leader'" in n and "not found on PATH" in n for n in notes)
    codex = prompt.option("codex/gpt-5.6")
    assert codex is not None and not codex.selectable
    assert prompt.default is not None and prompt.default.startswith("claude/")
    # Choosing another model works: the unavailable default is not used.
    end = run_through(wizard)
    assert end.kind == "done"
    assert wizard.outcome().render_args["task-type"] == "error-analysis"


def test_progress_is_exact_once_counts_are_known(
    tmp_path: Path, env: Environment, project: Path
) -> None:
    wizard = Wizard.init(
        tmp_path / "w.json", project, host="terminal", task_type="error-analysis", environment=env
    )
    prompt = wizard.prompt()
    seen: list[tuple[int, int, str]] = []
    while prompt.kind != "done":
        answered, total = wizard.progress()
        if seen:
            assert answered == seen[-1][0] + 1  # never backwards without a rewind
        assert total > answered
        seen.append((answered, total, prompt.step_kind))
        prompt = wizard.submit(prompt.default or ANSWERS.get(prompt.id, "x")).next
    answered, total = wizard.progress()
    assert answered == total == seen[-1][0] + 1
    # From the first model step on (every count answered) the total is exact.
    first = next(i for i, (_, _, kind) in enumerate(seen) if kind == "role_model")
    assert {t for _, t, _ in seen[first:]} == {answered}


@pytest.mark.parametrize(
    ("field", "change", "step", "says"),
    [
        # Above the profile's max but within the state file's bound: rewound, not refused.
        ("roleCounts", {"analyser": 9}, "role-count:analyser", "no longer an option"),
        ("roleCounts", {"ghost": 2}, "role-count:analyser", "unknown role 'ghost'"),
        ("roleModels", {"ghost": ["claude/opus-4.6"]}, "role-count:analyser", "unknown role"),
        ("roleModels", {"leader": ["nope/x"]}, "role-model:leader:1", "no longer an option"),
    ],
)
def test_tampered_role_fields_are_rewound_with_the_reason(
    tmp_path: Path,
    env: Environment,
    project: Path,
    field: str,
    change: dict[str, object],
    step: str,
    says: str,
) -> None:
    path = tmp_path / "w.json"
    wizard = Wizard.init(path, project, host="terminal", environment=env)
    assert run_through(wizard).kind == "done"
    raw = json.loads(path.read_text("utf-8"))
    raw[field].update(change)
    path.write_text(json.dumps(raw), encoding="utf-8")

    later = Wizard.open(path, environment=env)
    prompt = later.prompt()  # never raises, never sizes a team from the bad value
    stale = prompt.meta.get("stale")
    assert prompt.id == step and stale is not None and says in stale["reason"], prompt
    assert later.progress()[1] < 40
    assert later.refresh().id == step
    # Saved rewound: no longer confirmed, so there is no outcome to use.
    with pytest.raises(OkstraError):
        Wizard.open(path, environment=env).outcome()


def test_an_absurd_count_is_refused_before_anything_is_sized(
    tmp_path: Path, env: Environment, project: Path
) -> None:
    path = tmp_path / "w.json"
    wizard = Wizard.init(path, project, host="terminal", environment=env)
    assert run_through(wizard).kind == "done"
    raw = json.loads(path.read_text("utf-8"))
    raw["roleCounts"]["analyser"] = 100000000
    path.write_text(json.dumps(raw), encoding="utf-8")
    before = path.read_bytes()
    with pytest.raises(StateFileError, match=r"roleCounts\.analyser"):
        Wizard.open(path, environment=env).prompt()
    assert path.read_bytes() == before


def test_a_task_type_whose_profile_is_gone_is_rewound(
    tmp_path: Path, okstra_home: Path, bin_dir: Path, project: Path
) -> None:
    workspace = tmp_path / "ws"
    (workspace / "profiles").mkdir(parents=True)
    text = (BUNDLED / "error-analysis.md").read_text("utf-8")
    profile = workspace / "profiles" / "triage.md"
    profile.write_text(text.replace('"error-analysis"', '"triage"', 1), encoding="utf-8")
    env = _workspace_env(okstra_home, bin_dir, workspace)
    path = tmp_path / "w.json"
    wizard = Wizard.init(path, project, host="terminal", task_type="triage", environment=env)
    assert run_through(wizard).kind == "done"
    profile.unlink()

    later = Wizard.open(path, environment=env)
    view = later.view()
    stale = view.prompt.meta.get("stale")
    assert view.prompt.id == "task_type" and stale is not None
    assert "unknown task type 'triage'" in stale["reason"]
    assert [h.step_id for h in view.history] == ["task_pick", "task_group", "task_id", "brief"]
    assert later.refresh().id == "task_type"


def test_a_count_no_longer_asked_is_rewound_with_the_reason(
    tmp_path: Path, okstra_home: Path, bin_dir: Path, project: Path
) -> None:
    workspace = tmp_path / "ws"
    _edit_profile(workspace, "max = 3\nrecommended = 2", "max = 3\nrecommended = 2")
    env = _workspace_env(okstra_home, bin_dir, workspace)
    path = tmp_path / "w.json"
    _confirmed(env, path, project, {})
    # analyser becomes a fixed role: its count is no longer a question.
    _edit_profile(workspace, "min = 1\nmax = 3\nrecommended = 2", "min = 2\nmax = 2")

    later = Wizard.open(path, environment=env)
    prompt = later.prompt()
    stale = prompt.meta.get("stale")
    assert stale is not None and stale["step"] == "role-count:analyser", prompt
    assert "no longer asked" in stale["reason"]
    assert "role-count:analyser" not in [h.step_id for h in later.history()]
    assert run_through(later).kind == "done"
    assert later.state.role_counts.get("analyser") is None
