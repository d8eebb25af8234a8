"""Exactness at every prompt, against a brute-force oracle (hypothesis).

Random small catalogs — two task types with random roles (counts, `distinct`,
`exclude_models_of`), up to three providers with random role support, random CLIs on
PATH and disabled providers — and random walks through the real engine that pick
random *enabled* options. The oracle decides "a complete valid team exists" by a
plain depth-first search over every count the open roles may still take and every
model of every instance; it shares no code with the resolver.

Checked at every prompt: a pick prompt always has an enabled option unless it is
`blocked`; `blocked` appears exactly when no team exists; every option of the task
type, role-count, role-add and role-model prompts is enabled exactly when a team
exists after it; every walk that starts with a possible team reaches a confirmed
wizard. Then CLIs are removed: loading never fails, the first answer that no longer
holds is rewound with its reason (or the wizard says no team exists), and the
outcome of a confirmed wizard is refused while it does not hold.
"""

from __future__ import annotations

import itertools
import random
import shutil
import tempfile
import types
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import okstra_core.catalog
from okstra_core.catalog import Catalog
from okstra_core.catalog.models import (
    LEADER,
    GlobalConfig,
    HostSpec,
    LaunchSpec,
    ModelSpec,
    Profile,
    ProviderSpec,
    RoleRequirement,
)
from okstra_core.environment import Environment
from okstra_core.errors import OkstraError
from okstra_core.session import Wizard
from okstra_core.wizard import Prompt
from okstra_core.wizard.ids import parse_role_step
from tests.conftest import answering_probe

LAUNCH = LaunchSpec(
    version=("{cli}", "--version"),
    new=("{cli}", "--model", "{model}"),
    resume=("{cli}", "--resume", "{session_id}"),
)
TERMINAL = HostSpec(id="terminal", display_label="Terminal")
ROLES = ("r0", "r1", "r2")
TEXT = {"task_group": "g", "task_id": "t", "brief": "brief.md", "directive": "go"}


@dataclass
class World:
    profiles: dict[str, Profile]
    providers: list[ProviderSpec]
    clis: set[str]
    disabled: tuple[str, ...]

    def catalog(self) -> Catalog:
        return Catalog(
            profiles=types.MappingProxyType(dict(self.profiles)),
            providers=tuple(self.providers),
            hosts=types.MappingProxyType({"terminal": TERMINAL}),
            config=GlobalConfig(disabled_providers=self.disabled),
        )

    def environment(self, home: Path, clis: Iterable[str] | None = None) -> Environment:
        present = set(self.clis if clis is None else clis)
        return Environment(
            env={"OKSTRA_HOME": str(home), "PATH": "/nowhere"},
            which_override=lambda c: f"/nowhere/{c}" if c in present else None,
            probe_override=answering_probe,
        )


@st.composite
def worlds(draw: st.DrawFn) -> World:
    profiles: dict[str, Profile] = {}
    for task_type in ("t0", "t1"):
        names = [r for r in ROLES if draw(st.booleans())] or ["r0"]
        reqs = []
        for name in names:
            lo = draw(st.integers(0, 2))
            hi = draw(st.integers(max(lo, 1), 2))
            recommended = draw(st.one_of(st.none(), st.integers(lo, hi)))
            others = [o for o in [LEADER, *names] if o != name]
            reqs.append(
                RoleRequirement(
                    role=name,
                    duty=f"{name}-duty",
                    min=lo,
                    max=hi,
                    recommended=recommended,
                    distinct=draw(st.sampled_from(["model", "provider"])),
                    exclude_models_of=tuple(o for o in others if draw(st.integers(0, 3)) == 0),
                )
            )
        profiles[task_type] = Profile(task_type=task_type, title=task_type, roles=tuple(reqs))
    providers = []
    for p in range(draw(st.integers(1, 3))):
        proles = [r for r in (LEADER, *ROLES) if draw(st.integers(0, 3))] or [LEADER]
        models = []
        for m in range(draw(st.integers(1, 2))):
            mroles = [] if draw(st.booleans()) else [r for r in proles if draw(st.booleans())]
            effective = mroles or proles
            models.append(
                ModelSpec(
                    id=f"m{m}",
                    display=f"M{m}",
                    execution=f"x{m}",
                    roles=tuple(mroles),
                    default_for=tuple(r for r in effective if draw(st.booleans())),
                )
            )
        providers.append(
            ProviderSpec(
                id=f"p{p}",
                display_label=f"P{p}",
                cli=f"p{p}",
                roles=tuple(proles),
                launch=LAUNCH,
                models=tuple(models),
            )
        )
    clis = {p.cli for p in providers if draw(st.integers(0, 3))}
    disabled = tuple(p.id for p in providers if draw(st.integers(0, 6)) == 0)
    return World(profiles, providers, clis, disabled)


class Oracle:
    """Does a complete valid team exist? Depth-first search from first principles."""

    def __init__(self, world: World, clis: Iterable[str] | None = None) -> None:
        self.world = world
        present = set(world.clis if clis is None else clis)
        self.available: dict[str, list[tuple[str, str]]] = {}
        for role in (LEADER, *ROLES):
            self.available[role] = [
                (f"{p.id}/{m.id}", p.id)
                for p in world.providers
                for m in p.models
                if p.cli in present
                and p.id not in world.disabled
                and role in p.roles
                and (not m.roles or role in m.roles)
            ]

    def exists(
        self,
        profile: Profile,
        counts: Mapping[str, int],
        models: Mapping[str, Sequence[str]],
    ) -> bool:
        static = [r for r in profile.roles if not r.dynamic]
        ranges = [
            [counts[r.role]] if r.role in counts else list(range(r.min, r.max + 1)) for r in static
        ]
        for combo in itertools.product(*ranges):
            instances = [(LEADER, 1)]
            for req, n in zip(static, combo, strict=True):
                instances += [(req.role, k) for k in range(1, n + 1)]
            if any(
                len(models.get(r, ())) > n
                for r, n in zip([s.role for s in static], combo, strict=True)
            ):
                continue
            if self._search(profile, instances, models, []):
                return True
        return False

    def _search(
        self,
        profile: Profile,
        instances: list[tuple[str, int]],
        models: Mapping[str, Sequence[str]],
        chosen: list[tuple[str, str, str]],
    ) -> bool:
        if len(chosen) == len(instances):
            return True
        role, ordinal = instances[len(chosen)]
        fixed = models.get(role, ())
        for ref, provider in self.available[role]:
            if ordinal <= len(fixed) and fixed[ordinal - 1] != ref:
                continue
            if self._clash(profile, role, ref, provider, chosen):
                continue
            chosen.append((role, ref, provider))
            if self._search(profile, instances, models, chosen):
                return True
            chosen.pop()
        return False

    @staticmethod
    def _clash(
        profile: Profile, role: str, ref: str, provider: str, chosen: list[tuple[str, str, str]]
    ) -> bool:
        req = profile.role(role)
        for other, other_ref, other_provider in chosen:
            if other == role:
                if other_ref == ref:
                    return True
                if req is not None and req.distinct == "provider" and other_provider == provider:
                    return True
                continue
            mine = req.exclude_models_of if req is not None else ()
            theirs = profile.role(other)
            linked = other in mine or (theirs is not None and role in theirs.exclude_models_of)
            if linked and other_ref == ref:
                return True
        return False


def _expected(oracle: Oracle, world: World, wizard: Wizard, prompt: Prompt) -> dict[str, bool]:
    """Which options of a task-type / count / model prompt the oracle says can complete."""
    state = wizard.state
    if prompt.id == "task_type":
        return {o.value: oracle.exists(world.profiles[o.value], {}, {}) for o in prompt.options}
    parsed = parse_role_step(prompt.id)
    assert parsed is not None
    profile = world.profiles[state.task_type]
    counts = dict(state.role_counts)
    models = {r: list(m) for r, m in state.role_models.items()}
    out: dict[str, bool] = {}
    for option in prompt.options:
        if parsed.kind in ("role-count", "role-add"):
            others = {r: m for r, m in models.items() if r != parsed.role}
            out[option.value] = oracle.exists(
                profile, {**counts, parsed.role: int(option.value)}, others
            )
        else:
            mine = models.get(parsed.role, [])[: parsed.ordinal - 1]
            out[option.value] = oracle.exists(
                profile, counts, {**models, parsed.role: [*mine, option.value]}
            )
    return out


def _team_exists(oracle: Oracle, world: World, wizard: Wizard) -> bool:
    state = wizard.state
    if not state.task_type:
        return any(oracle.exists(p, {}, {}) for p in world.profiles.values())
    return oracle.exists(world.profiles[state.task_type], state.role_counts, state.role_models)


def _walk(wizard: Wizard, world: World, oracle: Oracle, rng: random.Random) -> Prompt:
    prompt = wizard.prompt()
    for _ in range(60):
        if prompt.kind in ("done", "blocked"):
            return prompt
        assert _team_exists(oracle, world, wizard), prompt.id
        if prompt.kind == "text":
            prompt = wizard.submit(TEXT.get(prompt.id, "x")).next
            continue
        enabled = [o.value for o in prompt.options if o.selectable]
        assert enabled, f"{prompt.id}: no enabled option and not blocked"
        if prompt.id == "task_type" or parse_role_step(prompt.id) is not None:
            expected = _expected(oracle, world, wizard, prompt)
            actual = {o.value: o.selectable for o in prompt.options}
            assert actual == expected, (prompt.id, prompt.options)
            if not all(actual.values()):
                event(f"{prompt.step_kind}: an option disabled")
        assert prompt.default is None or prompt.default in enabled
        answer = "confirm" if prompt.id == "confirm" else rng.choice(enabled)
        prompt = wizard.submit(answer).next
    raise AssertionError("the walk did not end in 60 steps")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "brief.md").write_text("# Brief\n", encoding="utf-8")
    return root


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(world=worlds(), seed=st.integers(0, 2**16), drop=st.data())
def test_random_enabled_walks_reach_confirm_and_agree_with_the_oracle(
    monkeypatch: pytest.MonkeyPatch,
    okstra_home: Path,
    project: Path,
    world: World,
    seed: int,
    drop: st.DataObject,
) -> None:
    catalog = world.catalog()
    monkeypatch.setattr(okstra_core.catalog, "load_catalog", lambda _env: catalog)
    oracle = Oracle(world)
    directory = Path(tempfile.mkdtemp())
    try:
        path = directory / "w.json"
        env = world.environment(okstra_home)
        wizard = Wizard.init(path, project, host="terminal", environment=env)
        end = _walk(wizard, world, oracle, random.Random(seed))
        possible = any(oracle.exists(p, {}, {}) for p in world.profiles.values())
        if not possible:
            # Said at the first step, with what to install or enable.
            assert end.kind == "blocked" and end.id == "task_pick", end
            assert end.meta.get("blocked", {}).get("advice")
            return
        assert end.kind == "done" and end.meta.get("confirmed"), end
        outcome = wizard.outcome()
        assert outcome.render_args["task-type"] == wizard.state.task_type

        # Replaying the same answers in one transaction (each answer checked against
        # the prompt the previous one produced) ends where answering one by one did.
        replayed, result = Wizard.replay_new(
            directory / "r.json", project, wizard.answers(), host="terminal", environment=env
        )
        assert result.error is None and result.applied == len(wizard.answers()), result
        mine, theirs = wizard.state, replayed.state
        assert [(e.step, e.answer, e.echo) for e in mine.answered] == [
            (e.step, e.answer, e.echo) for e in theirs.answered
        ]
        assert (mine.role_counts, mine.role_models) == (theirs.role_counts, theirs.role_models)
        assert replayed.outcome().request == outcome.request

        # The environment changes: some CLIs are gone.
        kept = {c for c in world.clis if drop.draw(st.booleans())}
        later = Wizard.open(path, environment=world.environment(okstra_home, kept))
        after = Oracle(world, kept)
        state = later.state
        still = after.exists(world.profiles[state.task_type], state.role_counts, state.role_models)
        prompt = later.prompt()  # never raises
        event(f"after removing CLIs: {prompt.kind}, stale={'stale' in prompt.meta}")
        if still:
            assert prompt.kind == "done"
            later.outcome()
            return
        with pytest.raises(OkstraError):
            later.outcome()
        assert prompt.kind in ("pick", "blocked"), prompt
        if prompt.kind == "pick":
            stale = prompt.meta.get("stale")
            assert stale is not None and stale["reason"], prompt
            assert stale["reason"] in prompt.help
            assert any(o.selectable for o in prompt.options)
        refreshed = later.refresh()
        assert refreshed.id == prompt.id
        assert Wizard.open(path, environment=later.environment).prompt().id == prompt.id
    finally:
        shutil.rmtree(directory)
