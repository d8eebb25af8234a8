"""Where a CLI comes from is named, and a PATH entry a project can fill is warned about.

A cloned repository may ship `node_modules/.bin/claude`. When the person's PATH holds a
relative entry (`node_modules/.bin`, `.`, an empty entry) or an absolute entry inside
the project, that file is what runs: `okstra doctor` (the installed command, and the
app's doctor) names the resolved file and the PATH entry for every CLI and warns about
such an entry; prepare's preflight says so in its result.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest

from okstra_core.environment import Environment
from okstra_core.life.doctor import diagnose, render
from okstra_core.readiness.cli import entry_risk, locate_cli
from tests.conftest import ALL_CLIS, okstra_cmd, write_fake_cli
from tests.reliability.reliability_support import prepare_argv

HELP = "usage: cli [--session-id ID] [--model M] [--no-daemon] [--config K=V] [prompt]"


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Any]:
    """A project shipping its own `claude` in node_modules/.bin, and the real ones
    (fake CLIs) in a directory outside it."""
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    (project / "brief.md").write_text("# Brief\n\nMake it faster.\n")
    local = write_fake_cli(project / "node_modules" / ".bin", "claude")
    bin_dir = tmp_path / "bin"
    for name in ALL_CLIS:
        write_fake_cli(bin_dir, name)
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
    env["FAKE_CLI_HELP"] = HELP
    return {"project": project, "local": local, "bin": bin_dir, "env": env}


def run(world: dict[str, Any], path: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = {**world["env"], "PATH": path}
    proc = subprocess.run(
        [*okstra_cmd(), *args],
        cwd=world["project"],
        env=env,
        capture_output=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()
    return proc


def checks(proc: subprocess.CompletedProcess[bytes]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in orjson.loads(proc.stdout)["checks"]}


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ("", "empty PATH entry"),
        (".", "relative PATH entry '.'"),
        ("node_modules/.bin", "relative PATH entry 'node_modules/.bin'"),
        ("./node_modules/.bin", "relative PATH entry"),
    ],
)
def test_relative_and_empty_entries_are_risks(tmp_path: Path, entry: str, said: str) -> None:
    risk = entry_risk(entry, tmp_path)
    assert risk is not None and said in risk and str(tmp_path) in risk


def test_an_absolute_entry_is_a_risk_only_inside_the_project(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".okstra").mkdir(parents=True)
    (project / "src" / "deep").mkdir(parents=True)
    (tmp_path / "tools").mkdir()
    here = project / "src" / "deep"
    inside = entry_risk(str(project / "node_modules" / ".bin"), here)
    assert inside is not None and f"inside the current project ({project})" in inside
    assert entry_risk(str(here / "bin"), here) is not None  # the current directory
    assert entry_risk(str(tmp_path / "tools"), here) is None
    assert entry_risk("/usr/bin", here) is None
    assert entry_risk(None, here) is None  # a command given with its directory


def test_running_in_home_does_not_make_home_tools_local(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / ".git").mkdir(parents=True)  # a dotfiles repository
    (home / "bin").mkdir()
    monkeypatch.setenv("HOME", str(home))
    assert entry_risk(str(home / "bin"), home) is None
    assert entry_risk(str(home / "bin"), home / "bin") is not None  # run from in there


def test_locate_names_the_file_the_link_leads_to_and_the_entry(tmp_path: Path) -> None:
    real = write_fake_cli(tmp_path / "opt" / "claude-1.0", "claude")
    links = tmp_path / "links"
    links.mkdir()
    (links / "claude").symlink_to(real)
    environment = Environment(env={"PATH": f"/nonexistent:{links}:/usr/bin"})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    origin = locate_cli("claude", environment, cwd=elsewhere)
    assert origin is not None
    assert (origin.path, origin.entry) == (str(links / "claude"), str(links))
    assert origin.resolved == str(real) and origin.risk is None


def test_doctor_names_each_cli_s_file_and_path_entry(world: dict[str, Any]) -> None:
    path = f"{world['bin']}:/usr/bin:/bin"
    found = checks(run(world, path, "doctor", "--json"))
    claude = found["claude"]
    assert claude["pathEntry"] == str(world["bin"])
    assert claude["resolvedPath"] == str(world["bin"] / "claude")
    assert claude["warning"] is None
    human = run(world, path, "doctor").stdout.decode()
    assert f"{world['bin'] / 'claude'} (PATH entry {world['bin']})" in human
    assert "warning" not in human


@pytest.mark.parametrize("entry", ["node_modules/.bin", "{project}/node_modules/.bin"])
def test_doctor_warns_about_a_cli_the_project_ships(world: dict[str, Any], entry: str) -> None:
    entry = entry.format(project=world["project"])
    path = f"{entry}:{world['bin']}:/usr/bin:/bin"
    found = checks(run(world, path, "doctor", "--json"))
    claude = found["claude"]
    assert claude["pathEntry"] == entry
    assert claude["resolvedPath"] == str(world["local"])
    assert claude["warning"] and "chooses what runs" in claude["warning"]
    assert found["codex"]["warning"] is None  # found in the real directory
    human = run(world, path, "doctor").stdout.decode()
    assert f"warning: {claude['warning']}" in human
    assert "warning: claude found through a PATH entry the current project can fill" in human


def test_an_empty_path_entry_is_the_current_directory_and_is_warned_about(
    world: dict[str, Any],
) -> None:
    write_fake_cli(world["project"], "codex")
    found = checks(run(world, f":{world['bin']}:/usr/bin:/bin", "doctor", "--json"))
    assert found["codex"]["pathEntry"] == ""
    assert "empty PATH entry" in found["codex"]["warning"]


def test_preflight_says_where_the_leader_came_from(world: dict[str, Any]) -> None:
    path = f"node_modules/.bin:{world['bin']}:/usr/bin:/bin"
    argv = prepare_argv(world["project"], extra=("--launch=none", "--dry-run"))
    proc = run(world, path, *argv)
    doc = orjson.loads(proc.stdout)
    results = {r["provider"]: r for r in doc["preflight"]}
    assert "relative PATH entry 'node_modules/.bin'" in (results["claude"]["warning"] or "")
    assert "warning:" in results["claude"]["message"]
    assert all(r["warning"] is None for p, r in results.items() if p != "claude")


def test_the_doctor_report_is_inert(tmp_path: Path) -> None:
    """A PATH entry is shown as the person's environment has it, control characters
    escaped (a directory name may hold any byte but `/` and NUL)."""
    odd = tmp_path / "bin\x1b]0;x\x07"
    write_fake_cli(odd, "claude")
    environment = Environment(env={"PATH": f"{odd}:/usr/bin:/bin", "FAKE_CLI_HELP": HELP})
    text = render(diagnose(environment, timeout=20, cwd=tmp_path))
    assert "\x1b" not in text and "\\x1b]0;x\\x07" in text
