"""`Wizard.accept_defaults`: the model steps' defaults, taken until one is not a default."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from wizard_helpers import run_through

from okstra_core.environment import Environment
from okstra_core.errors import AnswerRefused
from okstra_core.session import Wizard

FIRST_MODEL_STEP = "role-model:leader:1"


def _wizard(path: Path, project: Path, env: Environment) -> Wizard:
    wizard = Wizard.init(
        path, project, host="terminal", task_type="requirements-discovery", environment=env
    )
    assert run_through(wizard, stop=FIRST_MODEL_STEP).id == FIRST_MODEL_STEP
    return wizard


def test_every_default_is_taken_up_to_the_confirmation(
    tmp_path: Path, project: Path, env: Environment
) -> None:
    wizard = _wizard(tmp_path / "w.json", project, env)
    prompt = wizard.accept_defaults()
    assert prompt.meta.get("stepKind") != "role_model", prompt.id
    assert all(models for models in wizard.state.role_models.values())


def test_it_stops_where_no_default_can_be_chosen_and_refuses_there(
    tmp_path: Path, project: Path, okstra_home: Path, fake_bin: Callable[..., Path]
) -> None:
    # Two analysers (the task type's recommendation) and only claude runs: analyser
    # #2's default candidates are all another provider's (or taken), so its
    # preselected model is merely the first that can run.
    env = Environment(
        env={
            "OKSTRA_HOME": str(okstra_home),
            "PATH": f"{fake_bin('claude', directory=tmp_path / 'only-claude')}:/usr/bin:/bin",
        }
    )
    path = tmp_path / "w.json"
    wizard = _wizard(path, project, env)
    prompt = wizard.accept_defaults()
    assert prompt.id == "role-model:analyser:2"
    assert Wizard.open(path, environment=env).state.role_models == {
        "leader": ["claude/opus-4.6"],
        "analyser": ["claude/opus-4.6"],
    }
    before = path.read_bytes()
    with pytest.raises(AnswerRefused, match="No default to accept here"):
        wizard.accept_defaults()
    assert path.read_bytes() == before


def test_from_the_task_type_every_default_is_taken_up_to_the_confirmation(
    tmp_path: Path, project: Path, env: Environment
) -> None:
    path = tmp_path / "w.json"
    wizard = Wizard.init(path, project, host="terminal", environment=env)
    assert run_through(wizard, stop="task_type").id == "task_type"
    # What Enter on each screen gives, on a copy: the oracle.
    copy = tmp_path / "copy.json"
    copy.write_bytes(path.read_bytes())
    oracle = Wizard.open(copy, environment=env)
    while oracle.prompt().meta.get("stepKind") != "confirm":
        oracle.submit(oracle.prompt().default)
    prompt = wizard.accept_defaults()
    assert prompt.meta.get("stepKind") == "confirm"
    assert [a.step for a in wizard.state.answered] == [a.step for a in oracle.state.answered]
    assert wizard.state.role_models == oracle.state.role_models
    assert wizard.state.role_counts == oracle.state.role_counts
    assert wizard.state.task_type == oracle.state.task_type


def test_a_step_a_person_must_answer_has_no_default_to_accept(
    tmp_path: Path, project: Path, env: Environment
) -> None:
    path = tmp_path / "w.json"
    wizard = Wizard.init(path, project, host="terminal", environment=env)
    wizard.submit("new")  # now the task group: typed by a person
    before = path.read_bytes()
    with pytest.raises(AnswerRefused, match="No default to accept here"):
        wizard.accept_defaults()
    assert path.read_bytes() == before
