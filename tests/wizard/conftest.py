"""Fixtures of the wizard tests: a project, an environment with fake CLIs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from okstra_core.environment import Environment


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "brief.md").write_text("# Brief\n", encoding="utf-8")
    (root / "plan.md").write_text("+++\napproved = true\n+++\n# Plan\n", encoding="utf-8")
    return root


@pytest.fixture
def bin_dir(fake_bin: Callable[..., Path]) -> Path:
    return fake_bin()


@pytest.fixture
def env(okstra_home: Path, bin_dir: Path) -> Environment:
    """An environment whose PATH holds fake CLIs for every bundled provider."""
    return Environment(env={"OKSTRA_HOME": str(okstra_home), "PATH": f"{bin_dir}:/usr/bin:/bin"})


@pytest.fixture
def state_file(tmp_path: Path) -> Path:
    return tmp_path / "wizards" / "w.json"
