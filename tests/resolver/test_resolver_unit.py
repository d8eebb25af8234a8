"""Pool, binding, defaults and resolver: unit tests on in-memory catalogs."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

import pytest
from resolver_helpers import (
    CLAUDE_CODE,
    TERMINAL,
    make_pool,
    model,
    profile,
    provider,
    role,
)

from okstra_core.binding import Binding, bind, choose_runner
from okstra_core.catalog.models import LEADER, GlobalConfig, ModelDefaults
from okstra_core.defaults import DefaultScopes, screen_model_defaults
from okstra_core.errors import AssignmentResolutionError, DataFileError, OkstraError, UsageError
from okstra_core.resolver import (
    TeamQuery,
    model_options,
    resolve_assignments,
    role_counts_for,
    role_instances,
)

ALL = ["leader", "analyser", "critic", "report-writer"]
CLAUDE = provider(
    "claude",
    [
        model("opus", aliases=["Big"], default_for=["leader", "analyser"]),
        model("haiku", roles=["analyser", "critic"]),
    ],
    roles=ALL,
)
CODEX = provider("codex", [model("gpt", default_for=["analyser"])], roles=ALL)
GROK = provider("grok", [model("g4")], roles=["analyser", "critic"])


def rd_profile() -> object:
    return profile(
        role("analyser", lo=1, hi=3, recommended=2),
        role("critic", lo=0, hi=1, exclude=["analyser"]),
        role("report-writer"),
        role("fixer", dynamic=True),
    )


# ----------------------------------------------------------------------------- pool


def test_pool_lists_resolves_and_aliases() -> None:
    pool = make_pool([CLAUDE, CODEX, GROK])
    assert [m.ref for m in pool.list("critic")] == [
        "claude/opus",
        "claude/haiku",
        "codex/gpt",
        "grok/g4",
    ]
    assert [m.ref for m in pool.list("leader")] == ["claude/opus", "codex/gpt"]
    assert pool.resolve_alias("claude", "big").ref == "claude/opus"
    assert pool.resolve_alias("claude", "OPUS").ref == "claude/opus"
    assert pool.lookup("claude/BIG").ref == "claude/opus"
    assert [m.ref for m in pool.default_candidates("analyser")] == ["claude/opus", "codex/gpt"]
    with pytest.raises(UsageError, match="provider 'claude' has: claude/opus, claude/haiku"):
        pool.resolve("claude/nope")
    with pytest.raises(UsageError, match="unknown provider 'nope'"):
        pool.lookup("nope/x")
    with pytest.raises(UsageError, match="must be 'provider/model_id'"):
        pool.lookup("opus")


def test_availability_reasons_a_person_can_act_on() -> None:
    pool = make_pool([CLAUDE, CODEX, GROK], clis=["claude", "grok"], disabled=["grok"])
    av = pool.availability
    assert av("claude/opus", "analyser", TERMINAL, "spawn-process").available
    assert av("codex/gpt", "analyser", TERMINAL, "spawn-process").reason == (
        "cli 'codex' not found on PATH"
    )
    assert av("claude/haiku", "leader", TERMINAL, "spawn-process").reason == (
        "provider 'claude' does not support role 'leader'"
        if "leader" not in CLAUDE.roles
        else "model claude/haiku does not support role 'leader'"
    )
    assert av("grok/g4", "leader", TERMINAL, "spawn-process").reason == (
        "provider 'grok' does not support role 'leader'"
    )
    assert av("grok/g4", "analyser", TERMINAL, "spawn-process").reason == (
        "provider 'grok' is disabled in config (/cfg/config.json)"
    )


def test_cli_matters_only_when_the_instance_runs_through_it() -> None:
    host = replace(CLAUDE_CODE, native_provider="claude")
    pool = make_pool([CLAUDE, CODEX], clis=[])
    # A claude worker is a native sub-session of Claude Code: no CLI needed.
    assert pool.availability("claude/opus", "analyser", host, "spawn-process").available
    # The spawned leader runs through the claude CLI.
    assert pool.availability("claude/opus", "leader", host, "spawn-process").reason == (
        "cli 'claude' not found on PATH"
    )
    # In current-session mode the leader is the host session: nothing is chosen.
    reason = pool.availability("claude/opus", "leader", host, "current-session").reason
    assert reason is not None and "current-session" in reason
    assert pool.availability("codex/gpt", "analyser", host, "spawn-process").reason == (
        "cli 'codex' not found on PATH"
    )


def test_availability_is_cached_per_pool() -> None:
    calls: list[str] = []
    pool = make_pool([CODEX], clis=["codex"])
    original = pool.environment.which_override
    assert original is not None
    object.__setattr__(pool.environment, "which_override", lambda c: calls.append(c) or original(c))
    for _ in range(3):
        pool.availability("codex/gpt", "analyser", TERMINAL, "spawn-process")
        pool.availability("codex/gpt", "critic", TERMINAL, "spawn-process")
    assert calls == ["codex"]


# ----------------------------------------------------------------------------- binding


def test_runner_rules_and_bindings() -> None:
    host = replace(CLAUDE_CODE, native_provider="claude")
    pool = make_pool([CLAUDE, CODEX])
    opus, gpt = pool.resolve("claude/opus"), pool.resolve("codex/gpt")
    assert choose_runner(LEADER, "claude", host, "current-session") == "current-session"
    assert choose_runner(LEADER, "claude", host, "spawn-process") == "cli-wrapper"
    assert choose_runner("analyser", "claude", host, "spawn-process") == "native-session"
    assert choose_runner("analyser", "codex", host, "spawn-process") == "cli-wrapper"
    assert choose_runner("analyser", "claude", TERMINAL, "spawn-process") == "cli-wrapper"
    no_native = replace(host, native_sessions=False)
    assert choose_runner("analyser", "claude", no_native, "spawn-process") == "cli-wrapper"
    assert bind(gpt, "analyser", host, "spawn-process") == Binding(
        "cli-wrapper", "claude-code", None
    )
    assert bind(opus, "analyser", host, "spawn-process") == Binding(
        "native-session", "claude-code", "exec-opus"
    )
    with pytest.raises(
        OkstraError,
        match=r"unsupported host model: host='claude-code', "
        r"provider='claude', model='exec-opus'",
    ):
        bind(opus, LEADER, host, "current-session")


# ----------------------------------------------------------------------------- defaults


def test_default_scopes_order_provenance_and_dedupe() -> None:
    pool = make_pool([CLAUDE, CODEX, GROK])
    scopes = DefaultScopes(
        project=ModelDefaults(by_role={"analyser": ("grok/g4",)}, source="/p/project.json"),
        global_=ModelDefaults(by_role={"analyser": ("codex/gpt", "grok/g4")}, source="/c.json"),
    )
    assert [(m.ref, p) for m, p in scopes.candidates("analyser", pool)] == [
        ("grok/g4", "default:project"),
        ("codex/gpt", "default:global"),
        ("claude/opus", "default:bundled"),
    ]


def test_unavailable_configured_default_names_model_role_and_reason() -> None:
    pool = make_pool([CLAUDE, CODEX], clis=["claude"])
    scopes = DefaultScopes(
        global_=ModelDefaults(by_role={"critic": ("codex/gpt",)}, source="/cfg/config.json")
    )
    with pytest.raises(OkstraError) as info:
        scopes.validate(pool, TERMINAL, "spawn-process", ["critic"])
    assert "codex/gpt" in info.value.render()
    assert "'critic'" in info.value.render()
    assert "cli 'codex' not found on PATH" in info.value.render()
    assert "/cfg/config.json" in info.value.render()
    scopes.validate(pool, TERMINAL, "spawn-process", ["analyser"])  # not in this team: fine


def test_model_defaults_empty_array_is_refused() -> None:
    with pytest.raises(DataFileError) as info:
        screen_model_defaults(
            ModelDefaults(by_role={"analyser": ()}, source="/x/project.json"),
            [CLAUDE, CODEX],
            set(ALL),
        )
    assert info.value.field == "modelDefaults.analyser"
    assert info.value.path == "/x/project.json"


@pytest.mark.parametrize(
    ("by_role", "field", "kept"),
    [
        ({"nobody": ("claude/opus",)}, "modelDefaults.nobody", {}),
        (
            {"analyser": ("claude/opus", "claude/nope")},
            "modelDefaults.analyser[1]",
            {"analyser": ("claude/opus",)},
        ),
    ],
)
def test_unknown_defaults_are_noted_and_left_out(
    by_role: dict[str, tuple[str, ...]], field: str, kept: dict[str, tuple[str, ...]]
) -> None:
    screened, notes = screen_model_defaults(
        ModelDefaults(by_role=by_role, source="/x/project.json"), [CLAUDE, CODEX], set(ALL)
    )
    assert screened.by_role == kept
    assert len(notes) == 1 and notes[0].startswith(f"/x/project.json: {field}: unknown ")


def test_load_scopes_reads_project_and_global(tmp_path: Path) -> None:
    from okstra_core.defaults import load_scopes

    class Cat:
        providers = (CLAUDE, CODEX)
        profiles = {"requirements-discovery": rd_profile()}
        config = GlobalConfig(model_defaults=ModelDefaults(by_role={"critic": ("claude/haiku",)}))

    (tmp_path / ".okstra").mkdir()
    project = tmp_path / ".okstra" / "project.json"
    project.write_text(json.dumps({"modelDefaults": {"analyser": ["codex/gpt"]}}))
    scopes = load_scopes(tmp_path, Cat())
    assert scopes.project.by_role == {"analyser": ("codex/gpt",)}
    assert scopes.global_.by_role == {"critic": ("claude/haiku",)}
    project.write_text(json.dumps({"modelDefaults": {"analyser": ["codex/none"]}}))
    scopes = load_scopes(tmp_path, Cat())
    assert scopes.project.by_role == {}
    assert scopes.notes == (
        f"{project}: modelDefaults.analyser[0]: unknown model ref 'codex/none', ignored "
        "(expected 'provider/model_id' of a known model, or a claude model's id or alias)",
    )


# ----------------------------------------------------------------------------- counts


def test_role_counts_and_instances() -> None:
    prof = rd_profile()
    assert role_counts_for(prof, {}) == {
        "leader": 1,
        "analyser": 2,
        "critic": 0,
        "report-writer": 1,
    }
    assert role_instances(prof, {"analyser": 3, "critic": 1}) == [
        ("leader", 1),
        ("analyser", 1),
        ("analyser", 2),
        ("analyser", 3),
        ("critic", 1),
        ("report-writer", 1),
    ]
    for counts, message in [
        ({"nobody": 1}, "unknown role 'nobody'"),
        ({"analyser": 4}, "between 1 and 3"),
        ({"critic": -1}, "between 0 and 1"),
        ({"fixer": 1}, "dynamic"),
        ({"leader": 2}, "exactly one leader"),
    ]:
        with pytest.raises(UsageError, match=message):
            role_instances(prof, counts)


# ----------------------------------------------------------------------------- resolver


def test_resolve_fills_from_rotated_defaults_and_binds() -> None:
    pool = make_pool([CLAUDE, CODEX, GROK])
    plan = resolve_assignments(
        rd_profile(), {"analyser": 3}, {}, DefaultScopes(), pool, TERMINAL, "spawn-process"
    )
    got = [(a.role, a.ordinal, a.model_ref, a.provenance) for a in plan.assignments]
    assert got == [
        ("leader", 1, "claude/opus", "default:bundled"),
        ("analyser", 1, "claude/opus", "default:bundled"),
        ("analyser", 2, "codex/gpt", "default:bundled"),  # instance 2 starts at default 2
        ("analyser", 3, "claude/haiku", "default:pool"),
        ("report-writer", 1, "claude/opus", "default:pool"),
    ]
    assert all(a.binding.runner == "cli-wrapper" for a in plan.assignments)
    assert [r.role for r in plan.dynamic_roles] == ["fixer"]
    assert plan.assignments[1].duty == "analyser-duty"


def test_greedy_first_fit_fails_but_a_team_exists() -> None:
    # First fit gives analyser#1 claude/opus (the default) — the only model the critic can
    # use; the critic excludes analyser models, so greedy dead-ends. The resolver must
    # give the analysers other models.
    pool = make_pool([CLAUDE, CODEX, GROK], clis=["claude", "codex", "grok"])
    prof = profile(
        role("analyser", lo=2, hi=2), role("critic", exclude=["analyser"]), role("report-writer")
    )
    only_opus = DefaultScopes()
    pool_critic = make_pool(
        [
            provider(
                "claude",
                [
                    model("opus", default_for=["analyser", "leader"]),
                    model("haiku", roles=["analyser"]),
                ],
                roles=ALL,
            ),
            provider(
                "codex", [model("gpt", roles=["analyser", "leader", "report-writer"])], roles=ALL
            ),
        ]
    )
    plan = resolve_assignments(prof, {}, {}, only_opus, pool_critic, TERMINAL, "spawn-process")
    by = {(a.role, a.ordinal): a.model_ref for a in plan.assignments}
    assert by[("critic", 1)] == "claude/opus"
    assert {by[("analyser", 1)], by[("analyser", 2)]} == {"claude/haiku", "codex/gpt"}
    # And the wizard never offers claude/opus to analyser#1: it would be a dead end.
    query = TeamQuery(prof, {}, only_opus, pool_critic, TERMINAL, "spawn-process")
    options = model_options(query, "analyser", 1)
    reasons = {o.model.ref: o.disabled_reason for o in options}
    assert reasons["claude/opus"] is not None
    assert reasons["claude/opus"].startswith("no complete team would remain")
    assert reasons["claude/haiku"] is None and reasons["codex/gpt"] is None
    assert options[0].provenance == "default:bundled"
    del pool


def test_backtracking_case_found_by_stress() -> None:
    # Found by the stress comparison: a search that only follows its first choice
    # says "no team" here, although one exists.
    names = ["r0", "r1", "r2", "r3", LEADER]
    prof = profile(
        role("r0", lo=3, hi=3, exclude=["r2", "r3"]),
        role("r1", lo=3, hi=3, distinct="provider"),
        role("r2", lo=2, hi=2, distinct="provider", exclude=["r3"]),
        role("r3", lo=2, hi=2, distinct="provider", exclude=["r0", "r1", "r2"]),
    )
    provs = [
        provider(
            "p0", [model("m0", roles=[LEADER, "r3"]), model("m1", roles=["r0", "r3"])], roles=names
        ),
        provider(
            "p1",
            [
                model("m0", roles=["r2", "r0", "r1", "r3", LEADER]),
                model("m1", roles=["r3", "r2", "r0", LEADER, "r1"]),
                model("m2", roles=["r0", LEADER, "r2", "r3", "r1"]),
            ],
            roles=names,
        ),
        provider(
            "p2",
            [model("m0", roles=["r3", "r1", "r0", LEADER, "r2"]), model("m1", roles=[LEADER])],
            roles=names,
        ),
        provider("p3", [model("m0", roles=["r1", "r0"])], roles=names),
    ]
    pool = make_pool(provs)
    plan = resolve_assignments(prof, {}, {}, DefaultScopes(), pool, TERMINAL, "spawn-process")
    assert len(plan.assignments) == 11
    assert dfs_solutions(prof, pool, limit=1)


def test_no_team_lists_every_failing_candidate_and_constraint_at_once() -> None:
    pool = make_pool([CLAUDE, CODEX, GROK], clis=["claude", "grok"])
    prof = profile(
        role("analyser", lo=1, hi=3, distinct="provider"),
        role("critic", exclude=["analyser"]),
        role("report-writer"),
    )
    with pytest.raises(AssignmentResolutionError) as info:
        resolve_assignments(
            prof,
            {"analyser": 3},
            {"analyser": ["codex/gpt"], "critic": ["claude/opus"], "report-writer": ["grok/g4"]},
            DefaultScopes(),
            pool,
            TERMINAL,
            "spawn-process",
        )
    err = info.value
    assert "analyser#1 codex/gpt: cli 'codex' not found on PATH" in err.candidates
    assert "report-writer#1 grok/g4: provider 'grok' does not support role 'report-writer'" in (
        err.candidates
    )
    assert "analyser distinct-provider: required=3, available=2" in err.constraints
    assert err.exit_code == 1
    assert all(line in err.render() for line in err.candidates + err.constraints)


def test_explicit_duplicates_and_exclusions_are_failing_candidates() -> None:
    pool = make_pool([CLAUDE, CODEX, GROK])
    prof = profile(
        role("analyser", lo=2, hi=2, distinct="provider"), role("critic", exclude=["analyser"])
    )
    with pytest.raises(AssignmentResolutionError) as info:
        resolve_assignments(
            prof,
            {},
            {"analyser": ["claude/opus", "claude/haiku"], "critic": ["claude/opus"]},
            DefaultScopes(),
            pool,
            TERMINAL,
            "spawn-process",
        )
    assert info.value.candidates == [
        "analyser#2 claude/haiku: provider 'claude' is already used by analyser#1 "
        "(analyser needs distinct providers)",
        "critic#1 claude/opus: used by analyser#1 (critic excludes models of analyser)",
    ]


def test_exclusion_binds_whichever_role_is_chosen_first() -> None:
    pool = make_pool([CLAUDE, CODEX, GROK])
    prof = profile(role("critic", exclude=["analyser"]), role("analyser", lo=1, hi=1))
    query = TeamQuery(
        prof, {}, DefaultScopes(), pool, TERMINAL, "spawn-process", {"critic": ["grok/g4"]}
    )
    options = model_options(query, "analyser", 1)
    reasons = {o.model.ref: o.disabled_reason for o in options}
    assert reasons["grok/g4"] == "used by critic#1 (critic excludes models of analyser)"


def test_current_session_leader_has_no_model() -> None:
    host = replace(CLAUDE_CODE, native_provider="claude")
    pool = make_pool([CLAUDE, CODEX], clis=[])
    plan = resolve_assignments(
        rd_profile(), {"analyser": 1}, {}, DefaultScopes(), pool, host, "current-session"
    )
    leader = plan.assignments[0]
    assert (leader.role, leader.model_ref, leader.binding.runner) == (
        "leader",
        "claude/current-session",
        "current-session",
    )
    assert leader.provider_id == "claude" and leader.binding.host_model_value is None
    analyser = plan.assignments[1]
    assert analyser.binding == Binding("native-session", "claude-code", "exec-opus")
    with pytest.raises(UsageError, match="leader"):
        resolve_assignments(
            rd_profile(),
            {},
            {"leader": ["claude/opus"]},
            DefaultScopes(),
            pool,
            host,
            "current-session",
        )
    with pytest.raises(UsageError, match="entry mode 'current-session'"):
        resolve_assignments(
            rd_profile(), {}, {}, DefaultScopes(), pool, TERMINAL, "current-session"
        )


def test_too_many_models_and_unknown_roles_are_usage_errors() -> None:
    pool = make_pool([CLAUDE, CODEX])
    for models, message in [
        ({"report-writer": ["claude/opus", "codex/gpt"]}, "count is 1"),
        ({"nobody": ["claude/opus"]}, "unknown role"),
        ({"fixer": ["claude/opus"]}, "dynamic"),
        ({"analyser": ["claude/zzz"]}, "unknown model"),
    ]:
        with pytest.raises(UsageError, match=message):
            resolve_assignments(
                rd_profile(), {}, models, DefaultScopes(), pool, TERMINAL, "spawn-process"
            )


# ----------------------------------------------------------------------------- stress


def dfs_solutions(prof, pool, limit: int | None = None, fixed=None):  # type: ignore[no-untyped-def]
    """Independent exhaustive backtracking over role instances (no classes, no bounds)."""
    insts = role_instances(prof, {})
    reqs = {r.role: r for r in prof.roles}
    doms = [
        [
            m
            for m in pool.list(r)
            if pool.availability(m.ref, r, TERMINAL, "spawn-process").available
        ]
        for r, _ in insts
    ]
    chosen: list = []
    found: list = []

    def ok(i: int, m) -> bool:  # type: ignore[no-untyped-def]
        r = insts[i][0]
        if fixed and insts[i] in fixed and fixed[insts[i]] != m.ref:
            return False
        for j, other in enumerate(chosen):
            rr = insts[j][0]
            if rr == r:
                if other.ref == m.ref:
                    return False
                if (
                    reqs.get(r)
                    and reqs[r].distinct == "provider"
                    and (other.provider_id == m.provider_id)
                ):
                    return False
            elif other.ref == m.ref and (
                (reqs.get(r) and rr in reqs[r].exclude_models_of)
                or (reqs.get(rr) and r in reqs[rr].exclude_models_of)
            ):
                return False
        return True

    def go(i: int) -> None:
        if limit is not None and len(found) >= limit:
            return
        if i == len(insts):
            found.append([m.ref for m in chosen])
            return
        for m in doms[i]:
            if ok(i, m):
                chosen.append(m)
                go(i + 1)
                chosen.pop()

    go(0)
    return found


def test_stress_against_backtracking_oracle() -> None:
    """Denser cases than the hypothesis test (4 roles, linked densely), seeded."""
    rng = random.Random(20240601)
    mismatches = []
    for case in range(400):
        names = ["r0", "r1", "r2", "r3"][: rng.randint(2, 4)]
        reqs = []
        for n in names:
            c = rng.randint(1, 3)
            ex = [o for o in names if o != n and rng.random() < 0.5]
            reqs.append(role(n, lo=c, hi=c, distinct=rng.choice(["model", "provider"]), exclude=ex))
        prof = profile(*reqs)
        provs = []
        for p in range(rng.randint(2, 4)):
            ms = [
                model(f"m{i}", roles=rng.sample([*names, LEADER], rng.randint(1, len(names) + 1)))
                for i in range(rng.randint(1, 3))
            ]
            provs.append(provider(f"p{p}", ms, roles=[*names, LEADER]))
        pool = make_pool(provs)
        expected = bool(dfs_solutions(prof, pool, limit=1))
        try:
            plan = resolve_assignments(
                prof, {}, {}, DefaultScopes(), pool, TERMINAL, "spawn-process"
            )
        except AssignmentResolutionError:
            got = False
        else:
            got = True
            fixed = {(a.role, a.ordinal): a.model_ref for a in plan.assignments}
            assert dfs_solutions(prof, pool, limit=1, fixed=fixed), case
        if got != expected:
            mismatches.append(case)
    assert mismatches == []


def test_triangle_explanation_when_no_simple_bound_fails() -> None:
    # Three roles that pairwise exclude each other and two models usable by all:
    # every role and every pair fits, the three together do not.
    pool = make_pool([provider("p", [model("a"), model("b")], roles=["x", "y", "z", LEADER])])
    prof = profile(role("x", exclude=["y"]), role("y", exclude=["z"]), role("z", exclude=["x"]))
    with pytest.raises(AssignmentResolutionError) as info:
        resolve_assignments(prof, {}, {}, DefaultScopes(), pool, TERMINAL, "spawn-process")
    assert info.value.constraints == [
        "x, y, z distinct+exclude-models-of: required=3 instances; every count fits on its "
        "own, but no combination of the available models satisfies all constraints together"
    ]


def test_parse_role_args_keep_ordinal_order_and_resolve_aliases() -> None:
    from okstra_core.cli.roleargs import parse_role_counts, parse_role_models

    pool = make_pool([CLAUDE, CODEX])
    prof = rd_profile()
    assert parse_role_counts(["analyser=3", "critic=0", "leader=1"], prof) == {
        "analyser": 3,
        "critic": 0,
        "leader": 1,
    }
    assert parse_role_models(
        ["analyser=codex/gpt", "critic=claude/haiku", "analyser=CLAUDE/big"], prof, pool
    ) == {"analyser": ["codex/gpt", "claude/opus"], "critic": ["claude/haiku"]}
    for values, message in [
        (["fixer=claude/opus"], "dynamic"),
        (["=claude/opus"], "expected"),
        (["analyser=claude"], "must be 'provider/model_id'"),
    ]:
        with pytest.raises(UsageError, match=message):
            parse_role_models(values, prof, pool)
