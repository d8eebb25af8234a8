"""Runs found like git finds a repository; relaunch needs --again; doctor; install data."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from life_support import (
    base_env,
    make_fake_clis,
    okstra,
    okstra_json,
    prepare_args,
)

from okstra_core.catalog.loaders import load_provider
from okstra_core.errors import DataFileError, UsageError
from okstra_core.life.locate import locate_run
from okstra_core.life.runs import find_project_root


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Any]:
    project = tmp_path / "proj"
    (project / "src" / "deep").mkdir(parents=True)
    (project / "brief.md").write_text("Speed up the widget.\n", encoding="utf-8")
    bin_dir = make_fake_clis(tmp_path / "bin")
    return {
        "project": project,
        "sub": project / "src" / "deep",
        "bin": bin_dir,
        "env": base_env(bin_dir, tmp_path),
        "tmp": tmp_path,
    }


def prepared(world: dict[str, Any], task_id: str = "widget") -> dict[str, Any]:
    code, doc = okstra_json(
        prepare_args(world["project"], "none", task_id=task_id),
        cwd=world["project"],
        env=world["env"],
    )
    assert code == 0, doc
    return doc


def test_a_run_is_found_from_anywhere_in_the_project(world: dict[str, Any]) -> None:
    first = prepared(world, "widget")
    other = prepared(world, "gadget")
    run_dir = Path(first["runDir"])
    sub = world["sub"]
    assert find_project_root(sub) == world["project"].resolve()
    assert find_project_root(world["tmp"]) is None
    for name in (
        "perf/widget/requirements-discovery-001",
        "widget/requirements-discovery-001",
        "perf/widget",  # a task: its newest run
        str(run_dir),
        str(run_dir / "run-manifest.json"),
        os.path.relpath(run_dir, sub),
    ):
        assert locate_run(name, sub) == run_dir.resolve(), name
    # A bare run id in two tasks is ambiguous: both are named.
    with pytest.raises(UsageError, match="several runs") as info:
        locate_run(first["runId"], sub)
    assert "perf/widget/" in info.value.message and "perf/gadget/" in info.value.message
    with pytest.raises(UsageError, match="no run perf/nope"):
        locate_run("perf/nope/requirements-discovery-001", sub)
    with pytest.raises(UsageError, match="not inside an okstra project"):
        locate_run("requirements-discovery-001", world["tmp"])
    with pytest.raises(UsageError, match="not a run"):
        locate_run(str(world["project"] / "brief.md"), sub)
    # The commands that take a run: from the subdirectory, by <task>/<run-id>.
    name = f"perf/gadget/{other['runId']}"
    for args in (["report", "roles", name, "--json"], ["resume", name, "--wait", "0", "--json"]):
        code, doc = okstra_json(args, cwd=sub, env=world["env"])
        assert code == 0, (args, doc)
    code, doc = okstra_json(["status", name, "--json"], cwd=sub, env=world["env"])
    assert code == 0 and doc["runDir"] == other["runDir"] and doc["leadStatus"] == "prepared"
    proc = okstra(["status", "perf/widget/nope-001"], cwd=sub, env=world["env"])
    assert proc.returncode == 2 and b"no run perf/widget/nope-001" in proc.stderr
    assert proc.stdout == b""


def test_attach_without_a_tmux_window_says_how_to_resume(world: dict[str, Any]) -> None:
    doc = prepared(world)
    proc = okstra(["attach", doc["runId"]], cwd=world["sub"], env=world["env"])
    assert proc.returncode == 1
    message = proc.stderr.decode()
    assert "never launched" in message and f"okstra resume {doc['runDir']} --exec" in message


def test_relaunching_a_setup_needs_again(world: dict[str, Any]) -> None:
    from okstra_core.environment import Environment
    from tests.prepare.test_prepare_pipeline import confirmed_wizard

    state = world["tmp"] / "wizard.json"
    env = world["env"]
    confirmed_wizard(state, world["project"], Environment(env=env))
    args = ["prepare", "--state", str(state), "--launch", "none"]
    code, first = okstra_json(args, cwd=world["project"], env=env)
    assert code == 0, first
    runs = sorted(p.name for p in world["project"].glob(".okstra/tasks/*/*/runs/*"))
    code, refused = okstra_json(args, cwd=world["project"], env=env)
    assert code == 2 and refused["ok"] is False
    assert "--again" in refused["error"] and first["runId"] in refused["error"]
    assert refused["existingRun"]["runDir"] == first["runDir"]
    # Refused before anything was written.
    assert sorted(p.name for p in world["project"].glob(".okstra/tasks/*/*/runs/*")) == runs
    code, second = okstra_json([*args, "--again"], cwd=world["project"], env=env)
    assert code == 0 and second["runId"].endswith("-002"), second
    # A dry run is never refused (it launches nothing).
    code, dry = okstra_json([*args, "--dry-run"], cwd=world["project"], env=env)
    assert code == 0 and dry["dryRun"] is True
    # --again belongs to --state.
    code, doc = okstra_json(
        [*prepare_args(world["project"], "none"), "--again"], cwd=world["project"], env=env
    )
    assert code == 2 and "--again" in doc["error"]


def test_doctor_names_a_missing_cli_with_its_install_command(world: dict[str, Any]) -> None:
    (world["bin"] / "codex").unlink()
    world["env"].pop("GEMINI_CLI_HOME", None)  # no Gemini login
    code, doc = okstra_json(["doctor", "--json"], cwd=world["tmp"], env=world["env"])
    assert code == 0, doc  # claude can lead: a run can be launched
    checks = {c["name"]: c for c in doc["checks"]}
    codex = checks["codex"]
    assert codex["ok"] is False and "`codex` is not on PATH" in codex["problem"]
    assert "npm install -g @openai/codex" in codex["fix"]
    assert checks["claude"]["ok"] and checks["claude"]["launchFlagsOk"] is True
    assert checks["claude"]["version"] == "claude 9.9.9 (fake)"
    assert checks["tmux"]["kind"] == "tool"
    # gemini is found, but nothing says it is logged in: not ready.
    gemini = checks["antigravity"]
    assert gemini["ok"] and gemini["loggedIn"] is False and not gemini["ready"]
    assert "GEMINI_API_KEY" in gemini["login"] and "/login" not in gemini["loginFix"]
    assert doc["summary"].startswith("3 of 5 agent CLIs ready")
    human = okstra(["doctor"], cwd=world["tmp"], env=world["env"]).stdout.decode()
    assert "fix: install it with `npm install -g @openai/codex`" in human
    # Nothing that can lead: exit 1, and the human text says so.
    for name in ("claude", "gemini"):
        (world["bin"] / name).unlink()
    proc = okstra(["doctor"], cwd=world["tmp"], env=world["env"])
    assert proc.returncode == 1 and b"no agent CLI that can lead" in proc.stdout
    assert b"npm install -g @anthropic-ai/claude-code" in proc.stdout


def test_preflight_names_the_install_command(world: dict[str, Any]) -> None:
    from okstra_core.environment import Environment
    from okstra_core.launch import RoleInstance, preflight

    provider = load_provider(
        Path(__file__).resolve().parents[2] / "prompts" / "providers" / "antigravity.toml",
        bundled=True,
    )
    (world["bin"] / "gemini").unlink()
    instance = RoleInstance(role="leader", ordinal=1, provider=provider, runner="cli-wrapper")
    (result,) = preflight([instance], Environment(env=world["env"]))
    assert not result.ok and "npm install -g @google/gemini-cli" in (result.remedy or "")


def test_a_malformed_install_command_is_named(tmp_path: Path) -> None:
    source = Path(__file__).resolve().parents[2] / "prompts" / "providers" / "claude.toml"
    text = source.read_text(encoding="utf-8")
    for bad in ('install = ""', 'install = "npm i\\nrm -rf ~"', "install = 3"):
        path = tmp_path / "claude.toml"
        path.write_text(
            text.replace('install = "npm install -g @anthropic-ai/claude-code@latest"', bad)
        )
        with pytest.raises(DataFileError) as info:
            load_provider(path, bundled=False)
        assert "install" in info.value.render(), bad


def test_runs_json_is_complete_for_an_empty_project(world: dict[str, Any]) -> None:
    (world["project"] / ".okstra").mkdir()
    code, doc = okstra_json(["runs", "--json"], cwd=world["sub"], env=world["env"])
    assert code == 0 and doc["runs"] == [] and doc["all"] is False
    out = okstra(["runs"], cwd=world["sub"], env=world["env"]).stdout.decode()
    assert out.startswith("no runs in this project")
    assert (
        orjson.loads(
            okstra(["runs", "--all", "--json"], cwd=world["tmp"], env=world["env"]).stdout
        )["runs"]
        == []
    )
