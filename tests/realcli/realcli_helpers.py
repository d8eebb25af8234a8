"""Shared bits of the real-CLI tests (CLIs installed by scripts/install-agent-clis.sh)."""

from __future__ import annotations

from pathlib import Path

import pytest

from okstra_core.catalog.loaders import load_provider
from okstra_core.catalog.models import ProviderSpec

REPO = Path(__file__).resolve().parents[2]
CLI_BIN = REPO / ".cache" / "agent-clis" / "node_modules" / ".bin"
# scripts/install-agent-clis.sh installs exactly these (pinned), as CI does.
PINNED = {
    "claude": "@anthropic-ai/claude-code",
    "codex": "@openai/codex",
    "gemini": "@google/gemini-cli",
}
# Others, named by their npm package (the provider file's `install`).
PACKAGES = {**PINNED}


def install_hint(name: str) -> str:
    """The one command that puts `name` where these tests look for it."""
    if name in PINNED:
        return "install it with: bash scripts/install-agent-clis.sh (the pinned CLIs, as CI does)"
    package = PACKAGES.get(name, name)
    return f"install it with: npm install --prefix .cache/agent-clis {package}"


KICKOFF = "Begin the run described in your instructions"
# Ties a transcript to this test's lead prompt.
MARKER = "okstra-lead-prompt-marker-7f3a"


def require_cli(name: str) -> Path:
    path = CLI_BIN / name
    if not path.exists():
        pytest.skip(f"{path} is missing: {install_hint(name)}")
    return path


def bundled(provider_id: str) -> ProviderSpec:
    return load_provider(REPO / "prompts" / "providers" / f"{provider_id}.toml", bundled=True)


def lead_prompt(directory: Path) -> Path:
    path = directory / "lead-prompt.md"
    path.write_text(f"# Lead\nYou lead this run. {MARKER}\n", encoding="utf-8")
    return path


def base_env(home: Path) -> dict[str, str]:
    """An isolated environment: no user config, no API keys, only the pinned CLIs."""
    return {"PATH": f"{CLI_BIN}:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"}
