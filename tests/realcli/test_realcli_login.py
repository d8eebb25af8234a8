"""The real CLIs' offline login answers, as `okstra doctor` reads them.

`claude auth status` and `codex login status` exit 1 when not logged in and 0 when
they are; okstra reads only the exit status (and that the answer is one it knows).
"""

from __future__ import annotations

from pathlib import Path

from realcli_helpers import base_env, bundled, require_cli

from okstra_core.environment import Environment
from okstra_core.life.doctor import logged_in_offline

SECRET = "sk-test-0123456789abcdefghij"


def test_claude_auth_status_not_logged_in(tmp_path: Path) -> None:
    cli = require_cli("claude")
    provider = bundled("claude")
    assert provider.login is not None
    env = {**base_env(tmp_path), "CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}
    told, text = logged_in_offline(provider.login, str(cli), Environment(env=env), timeout=30)
    assert told is False, text
    assert "claude auth status" in text and str(tmp_path / "claude") in text


def test_codex_login_status_both_ways(tmp_path: Path) -> None:
    cli = require_cli("codex")
    provider = bundled("codex")
    assert provider.login is not None
    home = tmp_path / "codex-home"
    home.mkdir()
    env = Environment(env={**base_env(tmp_path), "CODEX_HOME": str(home)})
    told, text = logged_in_offline(provider.login, str(cli), env, timeout=30)
    assert told is False, text
    (home / "auth.json").write_text(f'{{"OPENAI_API_KEY": "{SECRET}"}}', encoding="utf-8")
    told, text = logged_in_offline(provider.login, str(cli), env, timeout=30)
    assert told is True, text
    assert SECRET[-5:] not in text  # codex prints part of the key; okstra never does
