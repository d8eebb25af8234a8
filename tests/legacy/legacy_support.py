"""Helpers of the legacy (v1) tests: a frozen copy of the providers and profiles.

The conversion tests compare against expected v2 files, so they build their pool and
profiles from `tests/legacy/data/` (a snapshot of the bundled data) rather than from
the live `prompts/`, which other work may change.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from okstra_core.catalog.loaders import load_profile, load_provider
from okstra_core.catalog.models import Profile
from okstra_core.defaults import DefaultScopes
from okstra_core.environment import Environment
from okstra_core.errors import UsageError
from okstra_core.pool import ModelPool

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
FIXTURES = HERE / "fixtures"
EXPECTED = HERE / "expected"
PROVIDER_ORDER = ("claude", "antigravity", "codex", "grok", "kimi")
FIXED_NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


@dataclass(frozen=True)
class LegacyWorld:
    """Everything `open_legacy` needs, built from the frozen data."""

    pool: ModelPool
    scopes: DefaultScopes
    environment: Environment
    profiles: dict[str, Profile]

    def profile(self, task_type: str) -> Profile:
        try:
            return self.profiles[task_type]
        except KeyError:
            raise UsageError(f"unknown task type {task_type!r}") from None


def build_world() -> LegacyWorld:
    """The pool, scopes, clock and profiles the expected files were made with."""
    environment = Environment(env={"PATH": "/nonexistent"}, now=lambda: FIXED_NOW)
    providers = [
        load_provider(DATA / "providers" / f"{p}.toml", bundled=True) for p in PROVIDER_ORDER
    ]
    profiles = {p.stem: load_profile(p) for p in sorted((DATA / "profiles").glob("*.md"))}
    return LegacyWorld(
        pool=ModelPool(providers, environment),
        scopes=DefaultScopes(),
        environment=environment,
        profiles=profiles,
    )


# Fake agent CLIs list every flag the bundled providers need, so prepare's preflight
# passes (the union of the providers' `launch.required_flags`).
FAKE_HELP = (
    "usage: cli [options] -- [prompt]\n"
    "  --session-id --session --model --resume --prompt-interactive --no-daemon\n"
    "  --config --system-prompt-file --agent-file\n"
)
