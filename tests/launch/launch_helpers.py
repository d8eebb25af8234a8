"""Helpers shared by the launch tests."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

from okstra_core.catalog.loaders import load_provider
from okstra_core.catalog.models import ProviderSpec
from okstra_core.environment import Environment

REPO = Path(__file__).resolve().parents[2]
PROVIDERS = REPO / "prompts" / "providers"

# Every shell metacharacter we can think of, as one argv element each.
NASTY = (
    "a;",
    ";",
    "$(touch /tmp/okstra-pwned)",
    "`id`",
    'it\'s "quoted"',
    "x y\tz",
    "line\nbreak",
    "#{pane_id}",
    "~",
    "*",
    "|&>out",
    "\\",
    "b\\;",
    "{braces}",
    "-e",
    "--",
    "ünïcödé",
)


def bundled(provider_id: str) -> ProviderSpec:
    return load_provider(PROVIDERS / f"{provider_id}.toml", bundled=True)


def uuids(*values: str) -> Iterator[uuid.UUID]:
    return iter(uuid.UUID(v) for v in values)


def fake_env(bin_dir: Path, **extra: str) -> Environment:
    """An Environment whose PATH holds only the fake CLIs and the system dirs."""
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(bin_dir.parent), **extra}
    fixed = uuid.UUID("11111111-2222-4333-8444-555555555555")
    return Environment(env=env, new_uuid=lambda: fixed)


def read_log(path: Path) -> list[dict[str, object]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
