"""okstra's directories are absolute (trust audit, second round, 6).

A relative `OKSTRA_HOME` was taken relative to the current directory: inside a
project, a cache the clone shipped was read as the user's own. A nonexistent deep
`OKSTRA_HOME` was created silently.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import okstra_cmd


def _okstra(cwd: Path, **env: str) -> subprocess.CompletedProcess[bytes]:
    full = {**os.environ, **env}
    return subprocess.run(
        [*okstra_cmd(), "models", "--json"],
        cwd=cwd,
        env=full,
        capture_output=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize("variable", ["OKSTRA_HOME", "OKSTRA_WORKSPACE"])
@pytest.mark.parametrize("value", ["home", "./home", "~x/y", ""])
def test_a_relative_directory_variable_is_refused(
    tmp_path: Path, variable: str, value: str
) -> None:
    project = tmp_path / "clone"
    (project / "home" / "cache").mkdir(parents=True)  # what a clone could ship
    proc = _okstra(project, **{variable: value})
    if value == "":
        assert proc.returncode == 0, proc.stderr  # unset: the defaults
        return
    said = (proc.stdout + proc.stderr).decode()
    assert proc.returncode == 2, said
    assert variable in said and "absolute" in said and "Traceback" not in said
    assert sorted(p.name for p in (project / "home").iterdir()) == ["cache"]


def test_a_missing_home_is_made_one_level_deep_only(tmp_path: Path) -> None:
    deep = tmp_path / "a" / "b" / "home"
    proc = _okstra(tmp_path, OKSTRA_HOME=str(deep))
    said = (proc.stdout + proc.stderr).decode()
    assert proc.returncode == 2 and "OKSTRA_HOME" in said and str(deep.parent) in said
    assert not (tmp_path / "a").exists()
    one = tmp_path / "home"
    proc = _okstra(tmp_path, OKSTRA_HOME=str(one))
    assert proc.returncode == 0, proc.stderr
    assert one.is_dir()
