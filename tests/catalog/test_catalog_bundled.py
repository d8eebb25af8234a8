"""The data okstra ships covers every kind of role requirement and task type."""

from __future__ import annotations

import re

import pytest

from okstra_core.catalog import (
    BUNDLED_PROVIDER_ORDER,
    LEADER,
    TASK_TYPES,
    Catalog,
    RoleKind,
    load_catalog,
    template_fields,
)
from okstra_core.environment import Environment


@pytest.fixture
def catalog() -> Catalog:
    return load_catalog(Environment.real())


def test_every_task_type_has_a_profile_in_order(catalog: Catalog) -> None:
    assert tuple(catalog.profiles) == TASK_TYPES
    # Which task types need an approved plan is said by their profiles.
    needing = {t for t, p in catalog.profiles.items() if p.needs_approved_plan}
    assert needing == {"implementation", "final-verification"}
    for task_type, profile in catalog.profiles.items():
        assert profile.task_type == task_type
        assert profile.title and profile.summary
        assert profile.source.endswith(f"{task_type}.md")


def test_profiles_cover_every_role_kind(catalog: Catalog) -> None:
    kinds = {r.kind for p in catalog.profiles.values() for r in p.roles}
    assert kinds == set(RoleKind)
    assert any(r.distinct == "provider" for p in catalog.profiles.values() for r in p.roles)
    assert any(r.exclude_models_of for p in catalog.profiles.values() for r in p.roles)


def test_implementation_has_one_fixed_implementer(catalog: Catalog) -> None:
    implementer = catalog.profile("implementation").role("implementer")
    assert implementer is not None
    assert (implementer.kind, implementer.min, implementer.max) == (RoleKind.FIXED, 1, 1)


def test_every_profile_has_one_report_writer_and_no_leader(catalog: Catalog) -> None:
    for profile in catalog.profiles.values():
        writer = profile.role("report-writer")
        assert writer is not None and (writer.min, writer.max) == (1, 1), profile.task_type
        assert profile.role(LEADER) is None


def test_profile_bodies_are_real_instructions(catalog: Catalog) -> None:
    for profile in catalog.profiles.values():
        lines = profile.body.splitlines()
        assert lines[0].startswith("# "), profile.task_type
        assert len(lines) >= 25, profile.task_type
        assert "+++" not in profile.body
        # The body talks about the roles the profile declares.
        for req in profile.roles:
            assert req.role in profile.body, (profile.task_type, req.role)


def test_providers_in_bundled_order(catalog: Catalog) -> None:
    assert tuple(p.id for p in catalog.providers) == BUNDLED_PROVIDER_ORDER
    assert all(p.bundled for p in catalog.providers)


def test_every_profile_role_and_the_leader_has_a_bundled_default(catalog: Catalog) -> None:
    roles = {r.role for p in catalog.profiles.values() for r in p.roles} | {LEADER}
    for role in roles:
        defaults = [
            f"{p.id}/{m.id}" for p in catalog.providers for m in p.models if role in m.default_for
        ]
        assert defaults, role
    analyser_default_providers = {
        p.id for p in catalog.providers for m in p.models if "analyser" in m.default_for
    }
    assert len(analyser_default_providers) >= 3


def test_leader_providers(catalog: Catalog) -> None:
    leaders = {p.id for p in catalog.providers if LEADER in p.roles}
    assert {"claude", "codex", "antigravity"} <= leaders


def test_claude_launch_matches_the_measured_cli(catalog: Catalog) -> None:
    claude = catalog.provider("claude")
    assert claude.launch.new == (
        "{cli}", "--session-id", "{session_id}", "--model", "{model}",
        "--append-system-prompt-file", "{prompt_file}", "--", "{kickoff}",
    )  # fmt: skip
    assert claude.launch.resume == ("{cli}", "--resume", "{session_id}", "--model", "{model}")
    assert claude.launch.session_id == "uuid4"
    opus = next(m for m in claude.models if m.id == "opus-4.6")
    assert (opus.display, opus.execution, opus.aliases) == (
        "Claude Opus 4.6",
        "claude-opus-4-6",
        ("opus",),
    )


def test_antigravity_passes_the_prompt_by_environment(catalog: Catalog) -> None:
    gemini = catalog.provider("antigravity")
    assert gemini.cli == "gemini"
    assert gemini.launch.env == {"GEMINI_SYSTEM_MD": "{prompt_file}"}
    assert "--prompt-interactive={kickoff}" in gemini.launch.new


def test_codex_discovers_its_session_id(catalog: Catalog) -> None:
    codex = catalog.provider("codex")
    launch = codex.launch
    assert launch.session_id == "discover" and launch.discover is not None
    assert "{session_id}" not in launch.new
    assert launch.resume == ("{cli}", "resume", "--no-daemon", "-m", "{model}", "{session_id}")
    assert launch.discover.glob == "{env.CODEX_HOME}/sessions/**/rollout-*.jsonl"
    assert launch.discover.default_home == "~/.codex"
    uid = "0199a213-81c0-7800-8aa1-bbab2a035a53"
    name = f"rollout-2025-10-01T12-30-05-{uid}.jsonl"
    match = re.search(launch.discover.id_pattern, name)
    assert match is not None and match.group(1) == uid


def test_launch_templates_use_known_placeholders_and_declared_flags(catalog: Catalog) -> None:
    for provider in catalog.providers:
        launch = provider.launch
        assert launch.version == ("{cli}", "--version")
        for argv in (launch.new, launch.resume):
            assert argv[0] == "{cli}"
        for flag in launch.required_flags:
            used = [a for a in launch.new + launch.resume if a == flag or a.startswith(flag + "=")]
            short = {"--model": "-m", "--config": "-c"}.get(flag)
            assert used or short in launch.new, (provider.id, flag)
        fields = {f for a in launch.new for f in template_fields(a)}
        assert "{kickoff}" in launch.new or any("{kickoff}" in a for a in launch.new)
        assert "session_id" in fields or launch.session_id == "discover"


def test_model_roles_and_defaults_are_within_provider_roles(catalog: Catalog) -> None:
    for provider in catalog.providers:
        for model in provider.models:
            effective = set(model.roles) or set(provider.roles)
            assert set(model.default_for) <= effective, (provider.id, model.id)


def test_hosts(catalog: Catalog) -> None:
    assert list(catalog.hosts) == ["claude-code", "codex", "terminal"]
    claude_code = catalog.host("claude-code")
    assert claude_code.native_provider == "claude"
    assert set(claude_code.entry_modes) == {"spawn-process", "current-session"}
    assert claude_code.native_sessions and claude_code.detect_env == ("CLAUDECODE",)
    codex = catalog.host("codex")
    assert codex.native_provider == "codex" and codex.native_sessions
    assert set(codex.detect_env) == {"CODEX_THREAD_ID", "CODEX_SANDBOX"}
    terminal = catalog.host("terminal")
    assert terminal.native_provider is None
    assert terminal.entry_modes == ("spawn-process",)
    assert not terminal.native_sessions and terminal.detect_env == ()


def test_unknown_lookups_name_the_known_ones(catalog: Catalog) -> None:
    from okstra_core.errors import UsageError

    with pytest.raises(UsageError, match="requirements-discovery"):
        catalog.profile("nope")
    with pytest.raises(UsageError, match="terminal"):
        catalog.host("nope")
    with pytest.raises(UsageError, match="claude"):
        catalog.provider("nope")
