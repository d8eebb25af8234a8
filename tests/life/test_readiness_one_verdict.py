"""One readiness verdict: every command reads the same one, whatever the cache holds.

The CLIs are fakes whose login status commands answer nothing okstra understands
("cannot tell"), and the Gemini CLI has no credentials (known to be logged out, told
offline). Each command runs with an empty cache, a warm one (what an earlier command
recorded) and a stale one (every record older than it may be, saying the opposite):
the same answer each time, and a team the wizard confirms passes prepare's preflight.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from life_support import base_env, make_fake_clis

from okstra_core import cli, derived
from okstra_core.environment import Environment
from okstra_core.paths import user_dirs
from okstra_core.readiness import cli as recorded
from okstra_core.session import Wizard
from tests.wizard.wizard_helpers import run_through

GEMINI = "antigravity/"


@pytest.fixture
def world(
    tmp_path: Path, okstra_home: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[dict[str, Any]]:
    bin_dir = make_fake_clis(tmp_path / "bin")
    no_login = tmp_path / "no-login"
    no_login.mkdir()
    env = base_env(bin_dir, tmp_path, HOME=str(no_login), GEMINI_CLI_HOME=str(no_login))
    for name in ("ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY"):
        env.pop(name, None)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    project = tmp_path / "proj"
    project.mkdir()
    (project / "brief.md").write_text("# Brief\n", encoding="utf-8")
    monkeypatch.chdir(project)
    yield {"env": env, "project": project, "home": okstra_home, "tmp": tmp_path}


def _run(capsysbinary: pytest.CaptureFixture[bytes], *argv: str) -> tuple[int, Any]:
    code = cli.main(list(argv))
    out = capsysbinary.readouterr().out
    return code, orjson.loads(out)


def _cache(world: dict[str, Any]) -> Path:
    return user_dirs(world["env"]).cache


def _empty(world: dict[str, Any]) -> None:
    for entry in (_cache(world) / recorded.KIND.name).glob("*"):
        entry.unlink()


def _stale(world: dict[str, Any]) -> None:
    """Every record older than `MAX_AGE`, and saying the opposite of what it said."""
    directory = _cache(world) / recorded.KIND.name
    entries = sorted(directory.glob("*.entry"))
    assert entries, "the warm cache holds no readiness record"
    for entry in entries:
        key = entry.name.removesuffix(".entry")
        verdict = derived.recall_value(_cache(world), recorded.KIND, key, recorded.Verdict)
        assert verdict is not None
        turned = verdict._replace(
            logged_in=verdict.logged_in is not True,
            problem=None if verdict.problem else "planted",
            at=time.time() - 2 * recorded.MAX_AGE,
        )
        derived.keep_value(_cache(world), recorded.KIND, key, turned)


def _wizard_outcome(world: dict[str, Any], path: Path | None = None) -> dict[str, Any]:
    env = Environment(env=dict(world["env"]))
    path = path or world["tmp"] / f"w-{time.monotonic_ns()}.json"
    wizard = Wizard.init(
        path, world["project"], host="terminal", task_type="requirements-discovery",
        environment=env,
    )  # fmt: skip
    prompt = run_through(wizard)
    assert prompt.kind == "done", prompt
    models = dict(wizard.state.role_models)
    assert not any(m.startswith(GEMINI) for ms in models.values() for m in ms), models
    return models


COMMANDS: dict[str, Callable[[pytest.CaptureFixture[bytes], dict[str, Any]], Any]] = {
    "models": lambda cap, w: _run(cap, "models", "--json"),
    "team": lambda cap, w: _run(
        cap, "team", "--task-type", "requirements-discovery", "--host", "terminal", "--json"
    ),
    "doctor": lambda cap, w: _run(cap, "doctor", "--json"),
    "wizard": lambda cap, w: _wizard_outcome(w),
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_each_command_answers_the_same_with_an_empty_a_warm_and_a_stale_cache(
    world: dict[str, Any], capsysbinary: pytest.CaptureFixture[bytes], command: str
) -> None:
    run = COMMANDS[command]
    _empty(world)
    empty = run(capsysbinary, world)
    warm = run(capsysbinary, world)
    _stale(world)
    stale = run(capsysbinary, world)
    assert empty == warm == stale


def test_the_team_never_holds_a_cli_known_to_be_logged_out(
    world: dict[str, Any], capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    code, team = _run(
        capsysbinary, "team", "--task-type", "requirements-discovery", "--host", "terminal",
        "--json",
    )  # fmt: skip
    assert code == 0, team
    refs = [i["modelRef"] for i in team["team"]]
    assert refs and not any(r.startswith(GEMINI) for r in refs), refs
    # "cannot tell" is selectable, with a note naming the CLI.
    assert any("cannot tell whether `claude` is logged in" in n for n in team["notes"]), team
    code, models = _run(capsysbinary, "models", "--json")
    gemini = [m for m in models["models"] if m["modelRef"].startswith(GEMINI)]
    assert gemini and not any(m["available"] for m in gemini)
    assert all("not logged in" in (m["reason"] or "") for m in gemini), gemini[0]
    # "cannot tell" (claude, codex) is selectable.
    claude = [m for m in models["models"] if m["modelRef"].startswith("claude/")]
    assert any(m["available"] for m in claude)


def test_a_confirmed_team_passes_preflight_whatever_ran_first(
    world: dict[str, Any], capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    # The wizard in a fresh home, then prepare's preflight of what it confirmed.
    state = world["tmp"] / "first.json"
    first = _wizard_outcome(world, state)
    code, doc = _run(capsysbinary, "prepare", "--state", str(state), "--dry-run")
    assert code == 0, doc
    assert doc["preflight"] and all(r["ok"] for r in doc["preflight"]), doc["preflight"]
    # The same wizard after preflight recorded every verdict: the same team.
    assert _wizard_outcome(world) == first
