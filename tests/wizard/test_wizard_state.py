"""Loading a state file: strict types, version checks, unreadable bytes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from wizard_helpers import run_through

from okstra_core.environment import Environment
from okstra_core.errors import StateFileError
from okstra_core.session import Wizard
from okstra_core.wizard.state import classify_version


def _saved(env: Environment, project: Path, state_file: Path) -> dict[str, Any]:
    wizard = Wizard.init(state_file, project, environment=env)
    run_through(wizard, stop="role-model:analyser:2")
    return json.loads(state_file.read_bytes())


def _refused(path: Path, env: Environment) -> StateFileError:
    before = path.read_bytes()
    with pytest.raises(StateFileError) as info:
        Wizard.open(path, environment=env)
    assert path.read_bytes() == before
    assert str(path) in info.value.render()
    return info.value


def test_saved_file_has_the_documented_shape(
    env: Environment, project: Path, state_file: Path
) -> None:
    raw = _saved(env, project, state_file)
    assert raw["executionIdentityVersion"] == 2
    for key in (
        "roleCounts",
        "roleModels",
        "roleSelectionOrder",
        "remembered_answers",
        "revision",
        "updated_at",
        "answered",
        "task_group",
        "host_entry_mode",
    ):
        assert key in raw
    assert raw["answered"][0] == {
        "step": "task_pick",
        "answer": "new",
        "provenance": "chosen",
        "echo": "task: Start a new task",
    }
    assert raw["roleCounts"] == {"analyser": 2, "critic": 0, "translator": 0}
    assert raw["revision"] >= 10
    assert Wizard.open(state_file, environment=env).state.to_file() is not None


@pytest.mark.parametrize(
    ("mutate", "field", "message"),
    [
        (
            lambda d: d["roleCounts"].update(analyser=True),
            "roleCounts.analyser",
            "boolean is not a count",
        ),
        (lambda d: d["roleCounts"].update(analyser="2"), "roleCounts.analyser", "integer"),
        (lambda d: d["roleModels"].update(leader="claude/opus-4.6"), "roleModels.leader", "list"),
        (lambda d: d["roleModels"].update(leader=[1]), "roleModels.leader[0]", "string"),
        (lambda d: d.update(roleSelectionOrder="x"), "roleSelectionOrder", "list"),
        (lambda d: d.update(confirmed=1), "confirmed", "boolean"),
        (lambda d: d.update(revision=True), "revision", "boolean is not a count"),
        (lambda d: d.update(surprise=1), "surprise", "unknown field"),
        (lambda d: d.pop("project_root"), "project_root", "missing"),
        (lambda d: d["answered"].append({"step": "x"}), "answered[", "missing"),
    ],
)
def test_wrong_types_are_refused_naming_the_field(
    env: Environment, project: Path, state_file: Path, mutate: Any, field: str, message: str
) -> None:
    raw = _saved(env, project, state_file)
    mutate(raw)
    state_file.write_text(json.dumps(raw), encoding="utf-8")
    error = _refused(state_file, env)
    assert field in (error.field or ""), error.render()
    assert message in error.message


@pytest.mark.parametrize("v1_field", ["lead_provider", "claudeModel", "workers_override", "critic"])
def test_v2_with_a_v1_field_is_mixed(
    env: Environment, project: Path, state_file: Path, v1_field: str
) -> None:
    raw = _saved(env, project, state_file)
    raw[v1_field] = "claude"
    state_file.write_text(json.dumps(raw), encoding="utf-8")
    error = _refused(state_file, env)
    assert "mixed wizard state versions are not allowed" in error.message
    assert error.field == v1_field


@pytest.mark.parametrize("version", [None, 1])
def test_v2_fields_without_v2_version_are_mixed(
    env: Environment, project: Path, state_file: Path, version: int | None
) -> None:
    raw = _saved(env, project, state_file)
    raw["executionIdentityVersion"] = version
    if version is None:
        del raw["executionIdentityVersion"]
    state_file.write_text(json.dumps(raw), encoding="utf-8")
    assert "mixed wizard state versions" in _refused(state_file, env).message


@pytest.mark.parametrize("version", [3, 0, "2", True, 2.0])
def test_unknown_versions_are_refused_by_name(
    env: Environment, project: Path, state_file: Path, version: Any
) -> None:
    raw = _saved(env, project, state_file)
    raw["executionIdentityVersion"] = version
    state_file.write_text(json.dumps(raw), encoding="utf-8")
    error = _refused(state_file, env)
    # Named as the file spells it: `true`, `"2"`, `2.0` (not Python's `True`, `'2'`).
    assert f"version {json.dumps(version)}:" in error.message
    assert error.field == "executionIdentityVersion"


def test_classify_version() -> None:
    assert classify_version({}) == 1
    assert classify_version({"executionIdentityVersion": 1, "lead_provider": "x"}) == 1
    assert classify_version({"executionIdentityVersion": 2, "roleCounts": {}}) == 2


def test_truncated_json_is_refused(env: Environment, project: Path, state_file: Path) -> None:
    _saved(env, project, state_file)
    data = state_file.read_bytes()
    state_file.write_bytes(data[: len(data) // 2])
    error = _refused(state_file, env)
    assert "invalid JSON" in error.message
    assert "truncated" in error.message


def test_non_utf8_is_refused(env: Environment, project: Path, state_file: Path) -> None:
    _saved(env, project, state_file)
    state_file.write_bytes(b'{"executionIdentityVersion": 2, "x": "\xff\xfe"}')
    assert "UTF-8" in _refused(state_file, env).message


@pytest.mark.parametrize("payload", [b"[]", b"42", b'"text"', b"null", b""])
def test_not_an_object_is_refused(env: Environment, state_file: Path, payload: bytes) -> None:
    state_file.parent.mkdir(parents=True, exist_ok=True)
    state_file.write_bytes(payload)
    _refused(state_file, env)


def test_missing_file_is_a_state_file_error(env: Environment, tmp_path: Path) -> None:
    with pytest.raises(StateFileError, match="not found"):
        Wizard.open(tmp_path / "nope.json", environment=env)
