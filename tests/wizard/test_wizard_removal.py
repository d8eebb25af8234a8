"""Removing wizards: `Wizard.discard_if_unanswered()` and `delete_wizard()`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from okstra_core.environment import Environment
from okstra_core.errors import StateFileError, StateInUseError, UsageError
from okstra_core.paths import user_dirs
from okstra_core.session import Wizard, delete_wizard, list_wizards
from okstra_core.store import lock_path_for

V1 = {
    "workspace_root": "",
    "project_id": "",
    "host_runtime": "terminal",
    "host_entry_mode": "spawn-process",
    "available_functions": [],
    "task_mode": "new",
    "task_key": "",
    "task_group": "grp",
    "task_id": "one",
    "brief_path": "brief.md",
    "task_type": "requirements-discovery",
    "workers_override": "claude,codex",
}


def wizards(env: Environment) -> Path:
    return user_dirs(env.env).wizards


def new_wizard(env: Environment, project: Path) -> Wizard:
    return Wizard.init(None, project, host="terminal", environment=env)


def write_v1(env: Environment, project: Path, name: str = "old.json") -> Path:
    path = wizards(env) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**V1, "project_root": str(project)}), encoding="utf-8")
    return path


def test_discard_removes_an_unanswered_wizard_and_its_lock(env, project) -> None:
    wizard = new_wizard(env, project)
    assert wizard.path.exists() and lock_path_for(wizard.path).exists()
    assert wizard.discard_if_unanswered() is True
    assert not wizard.path.exists() and not lock_path_for(wizard.path).exists()
    assert list_wizards(env) == []


def test_discard_under_a_held_lock(env, project) -> None:
    wizard = new_wizard(env, project)
    with wizard.hold():
        assert wizard.discard_if_unanswered() is True
    assert list(wizards(env).iterdir()) == []


@pytest.mark.parametrize("how", ["answered", "rewound"])
def test_discard_keeps_a_wizard_someone_answered(env, project, how) -> None:
    wizard = new_wizard(env, project)
    wizard.submit("new")
    if how == "rewound":
        wizard.back()  # nothing answered any more, but the dropped answer is remembered
        assert not wizard.state.answered and wizard.state.remembered_answers
    before = wizard.path.read_bytes()
    assert wizard.discard_if_unanswered() is False
    assert wizard.path.read_bytes() == before


def test_discard_sees_an_answer_given_by_another_process(env, project) -> None:
    wizard = new_wizard(env, project)
    Wizard.open(wizard.path, environment=env).submit("new")  # e.g. `okstra wizard step`
    assert wizard.discard_if_unanswered() is False
    assert wizard.path.exists()


def test_discard_refuses_while_another_process_holds_the_file(env, project) -> None:
    wizard = new_wizard(env, project)
    other = Wizard.open(wizard.path, environment=env)
    with other.hold(), pytest.raises(StateInUseError):
        wizard.discard_if_unanswered()
    assert wizard.path.exists()


def test_discard_never_touches_a_v1_source_or_its_companion(env, project) -> None:
    source = write_v1(env, project)
    before = source.read_bytes()
    legacy = Wizard.open(source, environment=env)
    assert legacy.legacy
    assert legacy.discard_if_unanswered() is False
    assert source.read_bytes() == before
    # A companion file carries legacySource: never "unanswered", even if empty.
    companion = wizards(env) / "c.json"
    empty = new_wizard(env, project)
    state = json.loads(empty.path.read_text())
    state["legacySource"] = {"path": str(source), "sha256": "0" * 64}
    companion.write_text(json.dumps(state))
    assert Wizard.open(companion, environment=env).discard_if_unanswered() is False
    assert companion.exists()


def test_delete_removes_a_listed_wizard_and_its_lock(env, project) -> None:
    wizard = new_wizard(env, project)
    wizard.submit("new")
    delete_wizard(wizard.path, env)
    assert not wizard.path.exists() and not lock_path_for(wizard.path).exists()
    assert list_wizards(env) == []


def test_delete_refuses_a_v1_file_and_a_broken_file(env, project) -> None:
    source = write_v1(env, project)
    before = source.read_bytes()
    with pytest.raises(UsageError, match="v1"):
        delete_wizard(source, env)
    assert source.read_bytes() == before
    broken = wizards(env) / "broken.json"
    broken.write_bytes(b"{not json")
    with pytest.raises(StateFileError):
        delete_wizard(broken, env)
    assert broken.read_bytes() == b"{not json"


def test_delete_refuses_files_outside_the_wizards_dir(env, project, tmp_path) -> None:
    elsewhere = Wizard.init(tmp_path / "mine.json", project, host="terminal", environment=env)
    with pytest.raises(UsageError, match="can be deleted"):
        delete_wizard(elsewhere.path, env)
    assert elsewhere.path.exists()
    with pytest.raises(UsageError, match="no such"):
        delete_wizard(wizards(env) / "gone.json", env)


def test_delete_refuses_a_wizard_open_elsewhere(env, project) -> None:
    wizard = new_wizard(env, project)
    with wizard.hold(), pytest.raises(StateInUseError):
        delete_wizard(wizard.path, env)
    assert wizard.path.exists()
