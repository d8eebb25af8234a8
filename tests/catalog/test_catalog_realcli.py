"""The bundled launch flags exist in the real CLIs (when the test cache has them).

The real programs are installed from the npm registry into `.cache/agent-clis` by the
real-CLI test setup; without them these tests are skipped.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from okstra_core.catalog import load_catalog
from okstra_core.environment import Environment
from tests.realcli.realcli_helpers import install_hint

CACHE_BIN = Path(__file__).resolve().parents[2] / ".cache" / "agent-clis" / "node_modules" / ".bin"

pytestmark = pytest.mark.realcli


def run_isolated(argv: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": f"{CACHE_BIN}:/usr/bin:/bin",
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / "claude"),
        "CODEX_HOME": str(home),
        "GEMINI_CLI_HOME": str(home),
    }
    return subprocess.run(
        argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize("provider_id", ["claude", "codex", "antigravity"])
def test_required_flags_are_in_the_real_help(provider_id: str, tmp_path: Path) -> None:
    spec = load_catalog(Environment.real()).provider(provider_id)
    exe = CACHE_BIN / spec.cli
    if not exe.exists():
        pytest.skip(f"{spec.cli} is not installed in {CACHE_BIN}: {install_hint(spec.cli)}")
    version = run_isolated([str(exe), *spec.launch.version[1:]], tmp_path)
    assert version.returncode == 0 and version.stdout.strip()
    result = run_isolated([str(exe), *spec.launch.help[1:]], tmp_path)
    text = result.stdout + result.stderr
    for flag in spec.launch.required_flags:
        assert re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", text), (provider_id, flag)
