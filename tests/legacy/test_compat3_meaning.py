"""Third compatibility round: the earlier okstra's settings keep their meaning.

`OKSTRA_DEFAULT_LEAD_MODEL` / `OKSTRA_DEFAULT_REPORT_WRITER_MODEL` apply to claude
assignments only; the report writer defaults to claude on every host; a codex host's
v1 file converts as the earlier okstra converted it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from compat2_support import labels, make_project, okstra, prepare_line
from test_compat2_confirmed import _v1


@pytest.fixture
def project(tmp_path: Path, fake_path: Path) -> Path:
    return make_project(tmp_path / "shop")


def test_the_lead_variable_is_for_a_claude_lead_only(project: Path) -> None:
    env = {"OKSTRA_DEFAULT_LEAD_MODEL": "opus"}
    payload, code, stderr = okstra(*prepare_line(project, "--host", "codex"), env=env)
    assert code == 0, payload
    assert labels(payload)["leader#1"] == "codex/gpt-5.6-sol"
    assert "OKSTRA_DEFAULT_LEAD_MODEL is ignored" in stderr and "'codex'" in stderr, stderr
    # A claude lead takes it (looked up in claude's models).
    payload, code, stderr = okstra(
        *prepare_line(project, "--host", "codex", "--lead-provider", "claude"), env=env
    )
    assert code == 0, payload
    assert labels(payload)["leader#1"] == "claude/opus-4.6"
    payload, code, _ = okstra(
        *prepare_line(project, "--host", "terminal"), env={"OKSTRA_DEFAULT_LEAD_MODEL": "sonnet"}
    )
    assert code == 0, payload
    assert labels(payload)["leader#1"] == "claude/sonnet-4.6"


def test_the_report_writer_is_claude_on_every_host(project: Path) -> None:
    for extra in ((), ("--lead-provider", "claude"), ("--lead-model", "gpt-5.6")):
        payload, code, _ = okstra(*prepare_line(project, "--host", "codex", *extra))
        assert code == 0, payload
        assert labels(payload)["report-writer#1"] == "claude/opus-4.6", extra
    env = {"OKSTRA_DEFAULT_REPORT_WRITER_MODEL": "sonnet"}
    payload, code, _ = okstra(*prepare_line(project, "--host", "codex"), env=env)
    assert code == 0, payload
    assert labels(payload)["report-writer#1"] == "claude/sonnet-4.6"
    # Not for a report writer of another provider: ignored, with a note.
    payload, code, stderr = okstra(
        *prepare_line(project, "--host", "codex", "--report-writer-provider", "codex"), env=env
    )
    assert code == 0, payload
    assert labels(payload)["report-writer#1"].startswith("codex/")
    assert "OKSTRA_DEFAULT_REPORT_WRITER_MODEL is ignored" in stderr, stderr


def test_without_claude_the_report_writer_is_the_next_default_that_can_run(
    project: Path, tmp_path: Path, fake_bin: object
) -> None:
    # No claude CLI: the report writer's next default that can run is taken.
    no_claude = fake_bin("codex", "gemini", directory=tmp_path / "no-claude")  # type: ignore[operator]
    env = {"PATH": f"{no_claude}:/usr/bin:/bin"}
    payload, code, _ = okstra(*prepare_line(project, "--host", "codex"), env=env)
    assert code == 0, payload
    assert labels(payload)["report-writer#1"].startswith("codex/")


def test_a_v1_file_of_a_codex_host_converts_to_a_claude_report_writer(
    project: Path, tmp_path: Path
) -> None:
    source = tmp_path / "wizards" / "codex.json"
    source.parent.mkdir()
    source.write_text(json.dumps(_v1(project, host_runtime="codex")))
    outcome, code, _ = okstra("wizard", "outcome", "--state", str(source))
    assert code == 0, outcome
    models = outcome["request"]["roleModels"]
    assert models["leader"][0].startswith("codex/"), models
    assert models["report-writer"] == ["claude/opus-4.6"], models


# ------------------------------------------------- modelDefaults the earlier okstra read


def _project_defaults(project: Path, block: object) -> Path:
    path = project / ".okstra" / "project.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"modelDefaults": block}), encoding="utf-8")
    return path


def test_model_defaults_the_earlier_okstra_read_stop_nothing(project: Path) -> None:
    path = _project_defaults(
        project,
        {"analyser": ["codex/gpt-5.6", "codex/gpt-5.6", "opus"], "report-writer": ["nope"]},
    )
    payload, code, stderr = okstra(*prepare_line(project, "--host", "terminal"))
    assert code == 0, payload
    assert labels(payload)["analyser#1"] == "codex/gpt-5.6"
    assert labels(payload)["analyser#2"] == "claude/opus-4.6"
    said = "\n".join(payload["notes"]) + stderr
    assert "modelDefaults.analyser[1]: 'codex/gpt-5.6' is listed already, ignored" in said
    assert "modelDefaults.analyser[2]: 'opus' read as 'claude/opus-4.6'" in said
    assert "modelDefaults.report-writer[0]: unknown model ref 'nope'" in said
    team, code, _ = okstra(
        "team", "--task-type", "error-analysis", "--project-root", str(project), "--json"
    )
    assert code == 0, team
    _project_defaults(project, [])
    payload, code, stderr = okstra(*prepare_line(project, "--host", "terminal"))
    assert code == 0, payload
    said = "\n".join(payload["notes"]) + stderr
    assert f"{path}: modelDefaults: expected an object" in said, said


def test_a_confirmed_v1_file_has_the_same_outcome_whatever_ran_before(
    project: Path, tmp_path: Path
) -> None:
    # Login status commands that answer nothing ("cannot tell"), no Gemini login.
    no_login = tmp_path / "no-login"
    no_login.mkdir()
    env = {"GEMINI_CLI_HOME": str(no_login), "HOME": str(no_login)}
    source = tmp_path / "wizards" / "v1.json"
    source.parent.mkdir()
    source.write_text(json.dumps(_v1(project)))
    first, code, _ = okstra("wizard", "outcome", "--state", str(source), env=env)
    assert code == 0, first
    other = [a for a in prepare_line(project, "--host", "codex", "--lead-model", "gpt-5.6")]
    other[other.index("chk-1")] = "chk-2"
    prepared, code, _ = okstra(*other, env=env)
    assert code == 0, prepared
    again, code, _ = okstra("wizard", "outcome", "--state", str(source), env=env)
    assert code == 0, again
    assert again["request"]["roleModels"] == first["request"]["roleModels"]
