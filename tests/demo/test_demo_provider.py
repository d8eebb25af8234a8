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
