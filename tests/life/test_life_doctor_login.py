"""`okstra doctor` tells whether each CLI is logged in, offline, by its provider's rules.

Real files in a temporary HOME, real environment variables, and fake CLIs whose status
command answers like the real one: what told is named (a variable's name, a file's
path), a secret's value never appears — in the JSON or the human report.
"""

from __future__ import annotations

import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from life_support import base_env, make_fake_clis, okstra, okstra_json

from okstra_core.catalog.loaders import load_provider
from okstra_core.environment import Environment
from okstra_core.errors import DataFileError
from okstra_core.life.doctor import logged_in_offline

REPO = Path(__file__).resolve().parents[2]
SECRET = "sk-very-secret-0123456789abcdef"

# Answers `codex login status` like the real codex: exit 0 and a masked key when
# $CODEX_HOME/auth.json exists, else exit 1 "Not logged in".
FAKE_CODEX = """#!{python}
import os, sys
args = sys.argv[1:]
if "--version" in args:
    print("codex-cli 0.0.0 (fake)"); sys.exit(0)
if "--help" in args:
    print("--no-daemon --model --config"); sys.exit(0)
if args[:2] == ["login", "status"]:
    home = os.environ.get("CODEX_HOME") or os.path.expanduser("~/.codex")
    if os.path.exists(os.path.join(home, "auth.json")):
        print("API key configured - " + open(os.path.join(home, "auth.json")).read().strip())
        sys.exit(0)
    print("Not logged in", file=sys.stderr); sys.exit(1)
sys.exit(3)
"""


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Any]:
    bin_dir = make_fake_clis(tmp_path / "bin")
    codex = bin_dir / "codex"
    codex.write_text(FAKE_CODEX.format(python=sys.executable), encoding="utf-8")
    codex.chmod(codex.stat().st_mode | stat.S_IXUSR)
    home = tmp_path / "home"
    home.mkdir()
    env = base_env(bin_dir, tmp_path, HOME=str(home))
    env.pop("GEMINI_CLI_HOME", None)  # no login but what each test puts in its HOME
    return {"bin": bin_dir, "home": home, "env": env}


def doctor(world: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], str]:
    code, doc = okstra_json(["doctor", "--json"], cwd=world["home"], env=world["env"])
    assert code in (0, 1), doc
    human = okstra(["doctor"], cwd=world["home"], env=world["env"]).stdout.decode()
    return {c["name"]: c for c in doc["checks"]}, human


def test_nothing_found_means_not_logged_in_and_says_where_it_looked(
    world: dict[str, Any],
) -> None:
    checks, human = doctor(world)
    gemini, codex = checks["antigravity"], checks["codex"]
    assert gemini["loggedIn"] is False and not gemini["ready"]
    assert str(world["home"] / ".gemini" / "oauth_creds.json") in gemini["login"]
    assert codex["loggedIn"] is False and "codex login status" in codex["login"]
    assert "codex login" in codex["loginFix"]
    # The fake claude does not know `auth status`: okstra cannot tell, and says so.
    assert checks["claude"]["loggedIn"] is None and checks["claude"]["ready"]
    # Providers without [login] rules: nothing is claimed.
    assert checks["grok"]["loggedIn"] is None and checks["grok"]["login"] is None
    assert "!! antigravity" in human and "not logged in:" in human


def test_credential_files_in_home_and_config_dirs_count(world: dict[str, Any]) -> None:
    home = world["home"]
    (home / ".claude").mkdir()
    (home / ".claude" / ".credentials.json").write_text(f'{{"token": "{SECRET}"}}')
    (home / ".gemini").mkdir()
    (home / ".gemini" / "oauth_creds.json").write_text(f'{{"access_token": "{SECRET}"}}')
    codex_home = home / "codex-home"
    codex_home.mkdir()
    (codex_home / "auth.json").write_text(SECRET)
    world["env"]["CODEX_HOME"] = str(codex_home)
    checks, human = doctor(world)
    assert checks["claude"]["loggedIn"] is True
    assert checks["claude"]["login"] == f"credentials in {home}/.claude/.credentials.json"
    assert checks["antigravity"]["loggedIn"] is True and checks["antigravity"]["ready"]
    assert checks["codex"]["loggedIn"] is True  # its status command said so
    assert SECRET not in human and SECRET[:8] not in str(checks)
    # An empty credentials file is not a login; a moved config dir is followed.
    (home / ".claude" / ".credentials.json").write_text("")
    moved = home / "elsewhere"
    moved.mkdir()
    (moved / ".credentials.json").write_text(SECRET)
    world["env"]["CLAUDE_CONFIG_DIR"] = str(moved)
    checks, _ = doctor(world)
    assert checks["claude"]["login"] == f"credentials in {moved}/.credentials.json"


def test_an_api_key_in_the_environment_is_named_never_shown(world: dict[str, Any]) -> None:
    world["env"]["GEMINI_API_KEY"] = SECRET
    world["env"]["ANTHROPIC_API_KEY"] = SECRET
    checks, human = doctor(world)
    assert checks["antigravity"]["login"] == "GEMINI_API_KEY is set"
    assert checks["claude"]["login"] == "ANTHROPIC_API_KEY is set"
    assert SECRET not in human and SECRET not in str(checks)


def test_a_status_command_that_is_not_understood_tells_nothing(tmp_path: Path) -> None:
    provider = load_provider(REPO / "prompts" / "providers" / "codex.toml", bundled=True)
    assert provider.login is not None
    cli = tmp_path / "codex"
    cli.write_text("#!/bin/sh\necho 'error: unexpected argument'\nexit 1\n")
    cli.chmod(0o755)
    env = Environment(env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    told, text = logged_in_offline(provider.login, str(cli), env, timeout=10)
    assert told is None and "exit 1" in text


@pytest.mark.parametrize(
    ("table", "field"),
    [
        ('env = ["NOT A NAME"]', "login.env[0]"),
        ('files = ["{home}/x"]', "login.files[0]"),
        ('status = ["rm", "-rf"]', "login.status[0]"),
        ('status = ["{cli}", "{model}"]', "login.status[1]"),
        ('status_pattern = "("', "login.status_pattern"),
    ],
)
def test_malformed_login_rules_are_named(tmp_path: Path, table: str, field: str) -> None:
    text = (REPO / "prompts" / "providers" / "grok.toml").read_text(encoding="utf-8")
    path = tmp_path / "grok.toml"
    path.write_text(text.replace("\n[[models]]", f"\n[login]\n{table}\n\n[[models]]", 1))
    with pytest.raises(DataFileError) as info:
        load_provider(path, bundled=False)
    assert field in info.value.render()


def test_every_bundled_provider_says_how_to_install_it() -> None:
    for path in sorted((REPO / "prompts" / "providers").glob("*.toml")):
        provider = load_provider(path, bundled=True)
        assert provider.install, path.name
