"""Fixtures of the prepare tests: fake CLIs whose --help lists every flag okstra needs."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

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
