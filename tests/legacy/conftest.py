"""Fixtures of the legacy (v1) tests (helpers live in `legacy_support`)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from legacy_support import FIXTURES, LegacyWorld, build_world


@pytest.fixture(scope="session")
def world() -> LegacyWorld:
    return build_world()


@pytest.fixture
def v1_copy(tmp_path: Path) -> Callable[[str], Path]:
    """Copy a fixture into a fresh directory (companions are written next to it)."""

    def copy(name: str) -> Path:
        target = tmp_path / "wizards" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(FIXTURES / name, target)
        return target

    return copy
