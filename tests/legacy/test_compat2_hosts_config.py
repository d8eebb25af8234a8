"""Second compatibility round: codex hosts lead with their own provider; the earlier
global config is a scope; unknown roles and models in `modelDefaults` are notes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from compat2_support import labels, make_project, okstra, prepare_line, snapshot


@pytest.fixture
def project(tmp_path: Path, fake_path: Path) -> Path:
    return make_project(tmp_path / "shop")


# ---------------------------------------------------------------- item 1: host provider


def test_codex_host_without_lead_flags_leads_with_codex(project: Path) -> None:
    payload, code, _ = okstra(*prepare_line(project, "--host", "codex"))
    assert code == 0, payload
    team = labels(payload)
    assert team["leader#1"].startswith("codex/")
    # The report writer stays claude's, as the earlier okstra chose it on every host.
    assert team["report-writer#1"].startswith("claude/")


def test_claude_host_keeps_the_claude_lead(project: Path) -> None:
    payload, code, _ = okstra(*prepare_line(project, "--host", "claude-code"))
    assert code == 0, payload
    assert labels(payload)["leader#1"].startswith("claude/")


def test_lead_model_without_provider_is_looked_up_on_the_host(project: Path) -> None:
    payload, code, stderr = okstra(
        *prepare_line(project, "--host", "codex", "--lead-model", "gpt-5.6")
    )
    assert code == 0, payload
    assert labels(payload)["leader#1"] == "codex/gpt-5.6"
    assert "--lead-model is deprecated: use --role-model leader=codex/gpt-5.6" in stderr


def test_lead_model_of_another_provider_is_found_across_providers(project: Path) -> None:
    payload, code, _ = okstra(
        *prepare_line(project, "--host", "terminal", "--lead-model", "gpt-5.6")
    )
    assert code == 0, payload
    assert labels(payload)["leader#1"] == "codex/gpt-5.6"
    payload, code, _ = okstra(*prepare_line(project, "--host", "codex", "--lead-model", "opus"))
    assert code == 0, payload
    assert labels(payload)["leader#1"] == "claude/opus-4.6"


def test_report_writer_model_without_provider_on_codex(project: Path) -> None:
    payload, code, _ = okstra(
        *prepare_line(project, "--host", "codex", "--report-writer-model", "gpt-5.6")
    )
    assert code == 0, payload
    assert labels(payload)["report-writer#1"] == "codex/gpt-5.6"


def test_ambiguous_lead_model_names_the_candidates(
    project: Path, okstra_home: Path, tmp_path: Path
) -> None:
    # A user provider with a model id the bundled codex provider has too.
    providers = okstra_home / "config" / "providers"
    providers.mkdir(parents=True)
    bundled = Path(__file__).resolve().parents[2] / "prompts" / "providers" / "codex.toml"
    text = bundled.read_text(encoding="utf-8")
    (providers / "twin.toml").write_text(
        text.replace('id = "codex"', 'id = "twin"', 1), encoding="utf-8"
    )
    payload, code, _ = okstra(
        *prepare_line(project, "--host", "terminal", "--lead-model", "gpt-5.6")
    )
    if code == 2 and "twin" not in json.dumps(payload):
        pytest.skip(f"a second provider cannot be declared this way: {payload}")
    assert code == 2, payload
    assert "ambiguous" in payload["error"]
    assert "codex/gpt-5.6" in payload["error"] and "twin/gpt-5.6" in payload["error"]
    assert payload.get("field") == "--lead-model"


def test_unknown_lead_model_is_refused(project: Path) -> None:
    payload, code, _ = okstra(*prepare_line(project, "--host", "codex", "--lead-model", "nope-9"))
    assert code == 2
    assert "'codex'" in payload["error"] and payload["field"] == "--lead-model"


# ---------------------------------------------------------- item 2: earlier global config


def _earlier_config(home: Path, defaults: dict[str, list[str]]) -> Path:
    path = home / "config.json"
    path.write_text(json.dumps({"modelDefaults": defaults, "language": "en", "x": 1}))
    return path


def test_earlier_global_config_is_a_scope_with_a_one_time_note(
    project: Path, okstra_home: Path
) -> None:
    earlier = _earlier_config(okstra_home, {"report-writer": ["claude/sonnet-4.6"]})
    before = snapshot(earlier)
    payload, code, _ = okstra(*prepare_line(project))
    assert code == 0, payload
    assert labels(payload)["report-writer#1"] == "claude/sonnet-4.6"
    notes = [n for n in payload["notes"] if "earlier global config" in n]
    assert len(notes) == 1
    assert str(earlier) in notes[0] and str(okstra_home / "config" / "config.json") in notes[0]
    again, code, _ = okstra(*prepare_line(project))
    assert code == 0
    assert labels(again)["report-writer#1"] == "claude/sonnet-4.6"
    assert not [n for n in again["notes"] if "earlier global config" in n]
    assert snapshot(earlier) == before


def test_user_config_wins_over_the_earlier_one(project: Path, okstra_home: Path) -> None:
    _earlier_config(okstra_home, {"report-writer": ["claude/sonnet-4.6"]})
    user = okstra_home / "config" / "config.json"
    user.parent.mkdir(parents=True)
    user.write_text(json.dumps({"modelDefaults": {"report-writer": ["codex/gpt-5.6"]}}))
    payload, code, _ = okstra(*prepare_line(project))
    assert code == 0, payload
    assert labels(payload)["report-writer#1"] == "codex/gpt-5.6"


def test_wizard_shows_the_earlier_config_note(project: Path, okstra_home: Path) -> None:
    _earlier_config(okstra_home, {"report-writer": ["claude/sonnet-4.6"]})
    payload, code, _ = okstra("wizard", "init", "--project-root", str(project))
    assert code == 0, payload
    assert any("earlier global config" in n for n in payload["notes"])


def test_broken_earlier_config_is_named(project: Path, okstra_home: Path) -> None:
    (okstra_home / "config.json").write_text('{"modelDefaults": {"leader": "claude/opus"}}')
    payload, code, _ = okstra(*prepare_line(project))
    assert code == 2
    assert str(okstra_home / "config.json") in payload["error"] or payload.get("path") == str(
        okstra_home / "config.json"
    )


def test_doctor_lists_the_config_files(project: Path, okstra_home: Path) -> None:
    _earlier_config(okstra_home, {"report-writer": ["claude/sonnet-4.6"]})
    payload, _code, _ = okstra("doctor", "--json")
    files = {f["scope"]: f for f in payload["configFiles"]}
    assert files["earlier global"] == {
        "scope": "earlier global",
        "path": str(okstra_home / "config.json"),
        "present": True,
    }
    assert files["user"]["present"] is False


# ------------------------------------------------------- item 4: unknown roles and models


def test_unknown_role_and_model_in_project_defaults_are_notes(project: Path) -> None:
    config = project / ".okstra" / "project.json"
    config.parent.mkdir(parents=True)
    config.write_text(
        json.dumps(
            {
                "modelDefaults": {
                    "lead": ["claude/opus-4.6"],
                    "report-writer": ["claude/nope-1", "claude/sonnet-4.6"],
                }
            }
        )
    )
    before = snapshot(config)
    payload, code, _ = okstra(*prepare_line(project))
    assert code == 0, payload
    assert labels(payload)["report-writer#1"] == "claude/sonnet-4.6"
    notes = "\n".join(payload["notes"])
    assert f"{config}: modelDefaults.lead: unknown role 'lead'" in notes
    assert f"{config}: modelDefaults.report-writer[0]: unknown model ref 'claude/nope-1'" in notes
    team, code, stderr = okstra(
        "team", "--project-root", str(project), "--task-type", "error-analysis", "--json"
    )
    assert code == 0, team
    assert "modelDefaults.lead: unknown role 'lead'" in stderr
    shown, code, _ = okstra("wizard", "init", "--project-root", str(project))
    assert code == 0, shown
    assert any("modelDefaults.lead" in n for n in shown["notes"])
    assert snapshot(config)[0] == before[0]


def test_lead_variable_is_not_applied_with_role_count(project: Path) -> None:
    env = {"OKSTRA_DEFAULT_LEAD_MODEL": "sonnet"}
    payload, code, stderr = okstra(*prepare_line(project, "--role-count", "analyser=2"), env=env)
    assert code == 0, payload
    assert labels(payload)["leader#1"] != "claude/sonnet-4.6"
    assert "OKSTRA_DEFAULT_LEAD_MODEL is not applied with --role-count/--role-model" in stderr
    payload, code, _ = okstra(*prepare_line(project), env=env)
    assert code == 0 and labels(payload)["leader#1"] == "claude/sonnet-4.6"
