"""Fixtures of the prepare tests: fake CLIs whose --help lists every flag okstra needs,
a scratch project and an environment (a test module may define its own)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from okstra_core.environment import Environment

# The union of the bundled providers' `launch.required_flags`: fake CLIs pass preflight.
FAKE_HELP = (
    "usage: cli [options] -- [prompt]\n"
    "  --session-id --session --model --resume --prompt-interactive --no-daemon\n"
    "  --config --system-prompt-file --agent-file\n"
)


@pytest.fixture(autouse=True)
def fake_cli_help(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("FAKE_CLI_HELP", FAKE_HELP)
    yield


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A scratch project with a brief at `brief.md`."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "brief.md").write_text("# Brief\nMake the widget faster.\n", encoding="utf-8")
    return root


@pytest.fixture
def env(fake_path: Path) -> Environment:
    """The process environment, with the fake provider CLIs on PATH."""
    return Environment(env=dict(os.environ))
