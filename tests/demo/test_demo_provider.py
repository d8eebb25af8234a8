"""The demo provider: listed last, never a default, chosen only where it is named."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from okstra_core.catalog import load_catalog
from okstra_core.defaults import DefaultScopes, load_scopes
from okstra_core.environment import Environment
from okstra_core.errors import OkstraError
from okstra_core.pool import ModelPool
from okstra_core.resolver import resolve_assignments

DEMO = Path(__file__).resolve().parents[2] / "demo"


def _env(path: str) -> Environment:
    return Environment(env={**os.environ, "PATH": path})


def _team(env: Environment, scopes: DefaultScopes | None = None, **models: list[str]) -> list[str]:
    catalog = load_catalog(env)
    team = resolve_assignments(
        catalog.profile("requirements-discovery"),
        {"critic": 1},
        models,
        scopes or DefaultScopes(),
        ModelPool.from_catalog(catalog, env),
        catalog.hosts["terminal"],
        "spawn-process",
    )
    return [a.model_ref for a in team.assignments]


def test_the_demo_agent_is_found_beside_okstra_without_path(tmp_path: Path) -> None:
    env = _env(str(tmp_path))
    found = env.which("okstra-demo-agent")
    assert found is not None and Path(found).parent == Path(env.own_dir or "")
    assert Environment(env={"PATH": str(tmp_path)}, own_dir=None).which("okstra-demo-agent") is None


def test_demo_models_are_listed_last_and_default_for_nothing(tmp_path: Path) -> None:
    catalog = load_catalog(_env(str(tmp_path)))
    assert catalog.providers[-1].id == "demo" and catalog.providers[-1].demo
    assert all(not m.default_for for m in catalog.providers[-1].models)


def test_no_agent_cli_means_no_team_even_with_the_demo_agent_installed(tmp_path: Path) -> None:
    # Only the demo agent runs here; nobody named it: it does not fill the team.
    with pytest.raises(OkstraError):
        _team(_env(str(tmp_path)))


def test_the_demo_projects_defaults_make_the_demo_team(tmp_path: Path) -> None:
    env = _env(str(tmp_path))
    scopes = load_scopes(DEMO, load_catalog(env), env.env)
    assert _team(env, scopes) == [
        "demo/lead", "demo/scout", "demo/tester", "demo/editor", "demo/lead",
    ]  # fmt: skip
    assert json.loads((DEMO / ".okstra" / "project.json").read_text("utf-8"))["modelDefaults"]


def test_a_person_may_pick_a_demo_model_and_the_rest_is_filled_without_demo(
    fake_bin: object, tmp_path: Path
) -> None:
    bin_dir = fake_bin("claude")  # type: ignore[operator]
    env = _env(f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin")
    assert "demo" not in " ".join(_team(env))
    picked = _team(env, analyser=["demo/scout"])
    assert picked[1] == "demo/scout"
    assert [ref.split("/")[0] for ref in picked[2:]] == ["claude", "claude", "claude"]


def test_without_agent_clis_the_first_step_says_each_provider_once(tmp_path: Path) -> None:
    from okstra_core.session import Wizard

    (tmp_path / "proj").mkdir()
    env = _env(str(tmp_path))
    wizard = Wizard.init(tmp_path / "w.json", tmp_path / "proj", host="terminal", environment=env)
    prompt = wizard.prompt()
    assert prompt.kind == "blocked"
    advice = prompt.meta["blocked"]["advice"]
    for provider, cli in (("claude", "claude"), ("antigravity", "gemini"), ("codex", "codex")):
        assert advice.count(f"cli '{cli}' not found on PATH") == 1, advice
        assert advice.count(f"{provider} (cli") == 1, advice
    assert "install: npm install -g @anthropic-ai/claude-code@latest" in advice
    assert "demo (" not in advice  # the demo agent is no fix of a real team
    # The headline says it once; the option only points at it; the demo team is offered.
    assert [o.disabled_reason for o in prompt.options] == ["no complete team: see above"]
    assert prompt.help.count("cli 'claude' not found on PATH") == 1
    assert "`okstra demo`" in prompt.help


def test_all_defaults_on_the_demo_project_reach_the_confirmation_marked_default(
    tmp_path: Path,
) -> None:
    import shutil

    from okstra_core.session import Wizard

    project = tmp_path / "demo"
    shutil.copytree(DEMO, project, ignore=shutil.ignore_patterns("__pycache__", "tasks"))
    env = _env(str(tmp_path))
    wizard = Wizard.init(tmp_path / "w.json", project, host="terminal", environment=env)
    for answer in ("new", "demo", "top-words", "brief.md"):
        wizard.submit(answer)
    prompt = wizard.accept_defaults()
    assert prompt.meta.get("stepKind") == "confirm", prompt.id
    provenance = {e.step: e.provenance for e in wizard.state.answered}
    assert provenance["task_type"] == "default:bundled"
    assert provenance["brief"] == "chosen"
    models = {k: v for k, v in provenance.items() if k.startswith("role-model:")}
    assert models and set(models.values()) == {"default:project"}, models
