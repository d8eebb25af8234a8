"""Converting v1 wizard state files into v2 state."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from legacy_support import EXPECTED, FIXTURES, LegacyWorld

from okstra_core.catalog.models import ModelDefaults, Profile, RoleRequirement
from okstra_core.compat import (
    V1_PROVIDER_FIELDS,
    convert,
    convert_v1,
    is_v1,
    open_legacy,
    opening,
    roles,
    shapes,
)
from okstra_core.defaults import DefaultScopes
from okstra_core.errors import StateFileError
from okstra_core.wizard import state

FIXTURE_NAMES = sorted(p.name for p in FIXTURES.glob("*.json"))


def _load(world: LegacyWorld, path: Path) -> tuple[Path, dict[str, Any], bool]:
    opened = open_legacy(
        path,
        profile_loader=world.profile,
        pool=world.pool,
        scopes=world.scopes,
        environment=world.environment,
    )
    return opened.companion, opened.state, opened.resumed


def _convert(
    world: LegacyWorld,
    raw: dict[str, Any],
    *,
    task_type: str | None = None,
    profile: Profile | None = None,
    entry_mode: str = "spawn-process",
    scopes: DefaultScopes | None = None,
) -> dict[str, Any]:
    base: dict[str, Any] = {"project_root": "/p", "host_runtime": "claude-code"}
    base.update(raw)
    if profile is None and task_type is not None:
        profile = world.profile(task_type)
    return convert_v1(
        base,
        profile=profile,
        pool=world.pool,
        scopes=scopes or world.scopes,
        entry_mode=entry_mode,
        source=Path("/wizards/x.json"),
        sha256="0" * 64,
    )


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_fixture_converts_to_expected_v2(
    world: LegacyWorld, v1_copy: Callable[[str], Path], name: str
) -> None:
    v1 = v1_copy(name)
    companion, converted, resumed = _load(world, v1)

    assert not resumed
    digest = hashlib.sha256(v1.read_bytes()).hexdigest()
    assert companion == v1.with_name(f"{name}.v2.{digest}.json")
    assert converted["legacySource"] == {"path": str(v1.resolve()), "sha256": digest}
    expected = orjson.loads((EXPECTED / name).read_bytes())
    expected["legacySource"]["path"] = str(v1.resolve())
    assert converted == expected
    # The engine's own v2 loader accepts every conversion as it stands.
    parsed = state.parse_v2(converted, str(companion))
    assert parsed.legacy_source is not None
    # Converted answers say so; models taken from a role's default candidates keep
    # their default scope.
    allowed = {"converted:v1", "converted:v2", "default:bundled"}
    assert {entry.provenance for entry in parsed.answered} <= allowed


def test_fixture_set_covers_the_v1_shapes() -> None:
    raws = {name: orjson.loads((FIXTURES / name).read_bytes()) for name in FIXTURE_NAMES}
    modes = {raw.get("host_entry_mode", "spawn-process") for raw in raws.values()}
    assert modes == {"spawn-process", "current-session"}
    assert any(raw.get("workers_override") for raw in raws.values())
    assert any(isinstance(raw.get("workers"), list) for raw in raws.values())
    assert any(not raw.get("workers_override") and not raw.get("workers") for raw in raws.values())
    assert any(raw.get("executor") for raw in raws.values())
    assert any(raw.get("critic") not in (None, "", "off") for raw in raws.values())
    assert len(FIXTURE_NAMES) >= 5


def test_v1_provider_fields_match_the_state_loader() -> None:
    # The engine's mixed-version check and this module must agree on what is v1.
    assert V1_PROVIDER_FIELDS == state.V1_PROVIDER_FIELDS
    assert {"workers_override", "kimiModel", "reportWriterProvider", "executor"} <= (
        V1_PROVIDER_FIELDS
    )


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({}, True),
        ({"executionIdentityVersion": None}, True),
        ({"executionIdentityVersion": 1}, True),
        ({"executionIdentityVersion": 2}, False),
        ({"executionIdentityVersion": True}, False),
        ({"executionIdentityVersion": "1"}, False),
        ({"executionIdentityVersion": 1.0}, False),
        ({"executionIdentityVersion": 3}, False),
    ],
)
def test_is_v1(raw: dict[str, Any], expected: bool) -> None:
    assert is_v1(raw) is expected


def test_roster_is_clamped_to_the_profile_maximum(world: LegacyWorld) -> None:
    out = _convert(
        world,
        {"workers_override": "claude,antigravity,codex,grok,kimi", "codex_model": "sol"},
        task_type="error-analysis",
    )
    assert out["roleCounts"] == {"analyser": 3}
    assert out["roleModels"]["analyser"] == [
        "claude/opus-4.6",
        "antigravity/gemini-3-pro",
        "codex/gpt-5.6-sol",
    ]


def test_roster_shorter_than_the_minimum_converts_a_model_prefix(world: LegacyWorld) -> None:
    profile = Profile(
        task_type="custom",
        roles=(RoleRequirement(role="verifier", duty="review", min=2, max=4),),
    )
    out = _convert(world, {"workers_override": "kimi"}, profile=profile)
    assert out["roleCounts"] == {"verifier": 2}
    # The leader takes v1's default provider (claude) with its default model.
    assert out["roleModels"] == {"leader": ["claude/opus-4.6"], "verifier": ["kimi/kimi-k2"]}
    assert out["roleSelectionOrder"] == [
        "role-count:verifier",
        "role-model:leader:1",
        "role-model:verifier:1",
    ]


def test_fixed_cross_verification_role_records_no_count_step(world: LegacyWorld) -> None:
    profile = Profile(
        task_type="custom",
        roles=(
            RoleRequirement(role="translator", duty="t", min=0, max=1),
            RoleRequirement(role="designer", duty="d", min=1, max=1),
            RoleRequirement(role="analyser", duty="a", min=1, max=3),
        ),
    )
    out = _convert(world, {"workers_override": "codex,claude"}, profile=profile)
    # The first cross-verification role in profile order is the designer (fixed: 1).
    assert out["roleCounts"] == {}
    assert out["roleModels"]["designer"] == ["codex/gpt-5.6"]
    assert out["roleSelectionOrder"] == ["role-model:leader:1", "role-model:designer:1"]


def test_provider_default_honours_the_default_scopes(world: LegacyWorld) -> None:
    scopes = DefaultScopes(project=ModelDefaults(by_role={"analyser": ("claude/haiku-4.5",)}))
    out = _convert(
        world,
        {"workers_override": "claude,codex"},
        task_type="requirements-discovery",
        scopes=scopes,
    )
    assert out["roleModels"]["analyser"] == ["claude/haiku-4.5", "codex/gpt-5.6-sol"]


def test_v1_model_spellings_all_resolve(world: LegacyWorld) -> None:
    for spelling in (
        "opus",
        "OPUS",
        "opus-4.6",
        "claude-opus-4-6",
        "claude/opus",
        "claude/opus-4.6",
    ):
        out = _convert(world, {"lead_model": spelling}, task_type="release-handoff")
        assert out["roleModels"]["leader"] == ["claude/opus-4.6"], spelling


def test_unknown_models_and_providers_are_dropped(world: LegacyWorld) -> None:
    out = _convert(
        world,
        {
            "workers_override": "gemini,claude",  # "gemini" is no provider id
            "lead_provider": "claude",
            "lead_model": "opus-3",
            "report_writer_provider": "grok",  # grok cannot write reports
            "critic": "codex",
            "codex_model": "codex/opus",  # a ref of the wrong provider
        },
        task_type="requirements-discovery",
    )
    assert out["roleCounts"] == {"analyser": 2, "critic": 1}
    assert out["roleModels"] == {}
    assert out["roleSelectionOrder"] == ["role-count:analyser", "role-add:critic"]


def test_model_of_another_role_is_dropped(world: LegacyWorld) -> None:
    # grok-4-fast serves analysers and critics only: not a verifier.
    out = _convert(
        world, {"workers_override": "grok", "grok_model": "fast"}, task_type="final-verification"
    )
    assert out["roleCounts"] == {"verifier": 1}
    assert "verifier" not in out["roleModels"]


def test_current_session_never_converts_the_leader(world: LegacyWorld) -> None:
    out = _convert(
        world,
        {"lead_provider": "claude", "lead_model": "opus"},
        task_type="requirements-discovery",
        entry_mode="current-session",
    )
    assert "leader" not in out["roleModels"]
    assert out["roleSelectionOrder"][0] == "leader-session"
    assert not any(s.startswith("role-model:leader") for s in out["roleSelectionOrder"])
    assert out["answered"][0] == {
        "step": "leader-session",
        "answer": "continue",
        "provenance": "converted:v1",
    }


def test_roles_absent_from_the_profile_are_skipped(world: LegacyWorld) -> None:
    out = _convert(
        world,
        {"executor": "claude", "critic": "codex", "workers_override": "claude"},
        task_type="release-handoff",
    )
    assert set(out["roleModels"]) == {"leader", "analyser", "report-writer"}
    assert "critic" not in out["roleCounts"]


def test_critic_off_is_an_answered_role_add_of_zero(world: LegacyWorld) -> None:
    out = _convert(world, {"critic": "off"}, task_type="implementation-planning")
    assert out["roleCounts"] == {"planner": 2, "critic": 0}
    assert "role-add:critic" in out["roleSelectionOrder"]
    assert {"step": "role-add:critic", "answer": "0", "provenance": "converted:v1"} in (
        out["answered"]
    )
    # The designer (optional, min 0) had no v1 answer: it is asked, not converted.
    assert "designer" not in out["roleCounts"]


def test_no_roster_takes_the_default_candidates_at_the_recommended_count(
    world: LegacyWorld,
) -> None:
    # As the earlier okstra did: no workers → the role's default candidates, each with
    # that provider's own v1 model when the file names one.
    out = _convert(
        world,
        {"use_defaults": None, "workers_override": "", "profile_workers": ["kimi", "grok"]},
        task_type="requirements-discovery",
    )
    assert out["roleCounts"] == {"analyser": 2}
    assert out["roleModels"]["analyser"] == ["claude/opus-4.6", "antigravity/gemini-3-pro"]
    provenance = {e["step"]: e["provenance"] for e in out["answered"]}
    assert provenance["role-model:analyser:1"] == "default:bundled"
    assert provenance["role-count:analyser"] == "converted:v1"
    with_model = _convert(world, {"claude_model": "sonnet"}, task_type="requirements-discovery")
    assert with_model["roleModels"]["analyser"][0] == "claude/sonnet-4.6"


def test_empty_providers_mean_claude(world: LegacyWorld) -> None:
    out = _convert(
        world,
        {"lead_provider": "", "report_writer_provider": "", "executor": "", "claude_model": ""},
        task_type="implementation",
    )
    assert out["roleModels"]["leader"][0].startswith("claude/")
    assert out["roleModels"]["report-writer"][0].startswith("claude/")
    assert out["roleModels"]["implementer"][0].startswith("claude/")
    # implementation's verifiers take the default candidates, never the executor's model.
    executor = _convert(
        world, {"executor": "codex", "codex_model": "sol"}, task_type="implementation"
    )
    assert executor["roleModels"]["implementer"] == ["codex/gpt-5.6-sol"]
    assert executor["roleModels"]["verifier"] == ["claude/sonnet-4.6"]


def test_critic_answers_are_kept_and_unanswered_critic_is_asked(world: LegacyWorld) -> None:
    asked = _convert(world, {"critic": ""}, task_type="requirements-discovery")
    assert "critic" not in asked["roleCounts"]
    declined = _convert(
        world, {"critic": "", "answered": ["critic_pick"]}, task_type="requirements-discovery"
    )
    assert declined["roleCounts"]["critic"] == 0
    pending = _convert(
        world,
        {"critic": "", "critic_pending_text": True, "answered": ["critic_pick"]},
        task_type="requirements-discovery",
    )
    assert pending["roleCounts"]["critic"] == 1
    assert "critic" not in pending["roleModels"]


def test_accepted_defaults_without_a_roster_keep_the_recommended_count(world: LegacyWorld) -> None:
    out = _convert(world, {"use_defaults": True}, task_type="implementation-planning")
    assert out["roleCounts"] == {"planner": 2}
    assert len(out["roleModels"]["planner"]) == 2


def test_confirmed_v1_is_not_confirmed_after_conversion(world: LegacyWorld) -> None:
    out = _convert(world, {"confirmed": True, "answered": ["confirm", "edit_target"]})
    assert out["confirmed"] is None
    assert out["answered"] == []


def test_static_answers_carry_over(world: LegacyWorld) -> None:
    out = _convert(
        world,
        {
            "task_mode": "new",
            "task_group": "g",
            "task_id": "t-1",
            "brief_path": "",
            "related_tasks_raw": "g/t-0",
            "answered": [
                "task_pick",
                "task_group",
                "task_id",
                "brief",
                "related_tasks_pick",
                "related_tasks",
                "task_pick",
                "pr_template_pick",
            ],
        },
    )
    assert [(e["step"], e["answer"]) for e in out["answered"]] == [
        ("task_pick", "new"),
        ("task_group", "g"),
        ("task_id", "t-1"),
        # "brief" had an empty answer: asked again
        ("related_tasks_pick", "choose"),
        ("related_tasks", "g/t-0"),
    ]


def test_mixed_versions_are_refused(world: LegacyWorld) -> None:
    with pytest.raises(StateFileError, match="mixed wizard state versions"):
        _convert(world, {"roleCounts": {}, "lead_model": "opus"})


def test_a_v2_payload_is_not_converted(world: LegacyWorld) -> None:
    with pytest.raises(StateFileError, match="not a v1 wizard state"):
        _convert(world, {"executionIdentityVersion": 2})


def test_malformed_unused_field_is_refused_too(world: LegacyWorld, tmp_path: Path) -> None:
    # implementation converts no roster, and an early file reads no model at all.
    cases = [
        {"task_type": "implementation", "workers": 2},
        {"kimiModel": ["k2"]},
        {"reuse_previous": "no"},
        {"profile_workers": "claude"},
    ]
    for index, extra in enumerate(cases):
        raw: dict[str, Any] = {"project_root": "/p", "host_runtime": "terminal", **extra}
        v1 = tmp_path / f"bad-{index}.json"
        v1.write_bytes(orjson.dumps(raw))
        with pytest.raises(StateFileError) as info:
            _load(world, v1)
        assert info.value.field == next(k for k in extra if k != "task_type"), extra


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("workers_override", 3),
        ("workers_override", ["claude", 7]),
        ("workers", {"claude": True}),
        ("claude_model", ["opus"]),
        ("leadModel", 4.6),
        ("report_writer_provider", False),
        ("executor", 1),
        ("critic", True),
        ("answered", "task_pick"),
        ("answered", ["task_pick", None]),
        ("available_functions", "Task"),
        ("confirmed", "yes"),
        ("aborted", 0),
        ("use_defaults", "true"),
        ("task_type", ["error-analysis"]),
        ("directive", 12),
        ("host_entry_mode", "sideways"),
        ("task_mode", "reuse"),
        ("project_root", ""),
    ],
)
def test_malformed_v1_names_file_and_field(
    world: LegacyWorld, tmp_path: Path, field: str, value: Any
) -> None:
    raw: dict[str, Any] = {
        "project_root": "/p",
        "host_runtime": "claude-code",
        "task_type": "requirements-discovery",
        "workers_override": "claude",
        "critic": "codex",
        "answered": ["task_type"],
    }
    raw[field] = value
    v1 = tmp_path / "bad.json"
    v1.write_bytes(orjson.dumps(raw))
    with pytest.raises(StateFileError) as info:
        _load(world, v1)
    assert info.value.path == str(v1)
    assert info.value.field == field
    assert str(v1) in info.value.render() and field in info.value.render()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"{not json", "invalid JSON"),
        (b"[1, 2]", "expected a JSON object"),
        (b'{"project_root": "\xff"}', "UTF-8"),
    ],
)
def test_unreadable_v1_is_a_state_file_error(
    world: LegacyWorld, tmp_path: Path, content: bytes, message: str
) -> None:
    v1 = tmp_path / "bad.json"
    v1.write_bytes(content)
    with pytest.raises(StateFileError, match=message) as info:
        _load(world, v1)
    assert info.value.path == str(v1)


def test_missing_v1_file_is_a_state_file_error(world: LegacyWorld, tmp_path: Path) -> None:
    with pytest.raises(StateFileError, match="not found"):
        _load(world, tmp_path / "absent.json")


def test_legacy_module_never_writes(world: LegacyWorld, v1_copy: Callable[[str], Path]) -> None:
    # The module's contract: it hands the engine a dict; the engine saves it.
    for legacy in (convert, opening, roles, shapes):
        assert not hasattr(legacy, "atomic_write_json")
    v1 = v1_copy("rd_spawn_workers_models.json")
    before = sorted(p.name for p in v1.parent.iterdir())
    _load(world, v1)
    assert sorted(p.name for p in v1.parent.iterdir()) == before
