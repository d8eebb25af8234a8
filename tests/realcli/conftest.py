"""Fixtures of the real-CLI tests."""

from __future__ import annotations

import shutil
import subprocess
import uuid
from collections.abc import Iterator

import pytest


@pytest.fixture
def tmux_socket() -> Iterator[str]:
    """The name of a private tmux server (`tmux -L`), killed afterwards."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    name = f"okstra-test-{uuid.uuid4().hex[:12]}"
    yield name
    subprocess.run(["tmux", "-L", name, "kill-server"], capture_output=True, check=False)
