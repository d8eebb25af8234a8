"""scripts/setup.sh (README command 1's install part): its two ways of installing, and
what it says when it cannot work.

The install from the index (a venv and `pip install .`) is measured end to end by
`python -m bench --only h`. Here setup.sh installs a wheel of okstra built from this
checkout, with `--no-index` (its arguments go to pip), so no index is asked; the
refusals must name the problem and exit 2 before anything is created.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from hatchling import build as backend

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "setup.sh"


def _setup(tmp_path: Path, python: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHON": python,
        "OKSTRA_VENV": str(tmp_path / "venv"),
        "PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin",
    }
    return subprocess.run(
        ["bash", str(SCRIPT), *args],
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _fake_python(tmp_path: Path, version: str) -> str:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    fake = bin_dir / "python-old"
    major, minor = version.split(".")
    # Answers the version check the way that Python would; anything else fails loudly.
    fake.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = --version ]; then echo "Python {version}.0"; exit 0; fi\n'
        f'if [ "$1" = -c ]; then exec python3 -c "import sys; sys.version_info = ({major}, '
        f'{minor}); $2"; fi\n'
        'echo "unexpected: $*" >&2; exit 99\n'
    )
    fake.chmod(0o755)
    return str(fake)


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_no_python_is_named_with_what_okstra_needs(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    proc = _setup(tmp_path, "no-such-python")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == (
        "okstra setup: no 'no-such-python' on PATH: okstra needs Python 3.11 or newer "
        "(set PYTHON=… to pick one)"
    )
    assert not (tmp_path / "venv").exists()


@pytest.mark.skipif(shutil.which("python3") is None, reason="needs python3")
def test_an_old_python_is_refused_before_anything_is_made(tmp_path: Path) -> None:
    proc = _setup(tmp_path, _fake_python(tmp_path, "3.9"))
    assert proc.returncode == 2, proc.stderr
    assert "Python 3.9.0 is too old: okstra needs Python 3.11 or newer" in proc.stderr
    assert "unexpected" not in proc.stderr
    assert not (tmp_path / "venv").exists()


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(REPO)
        return out / backend.build_wheel(str(out))


def _has(venv_dir: Path, module: str) -> bool:
    python = venv_dir / "bin" / "python"
    found = subprocess.run([str(python), "-c", f"import {module}"], capture_output=True)
    return found.returncode == 0


@pytest.mark.slow
def test_with_a_pip_of_its_own_python_installs_into_a_venv_made_without_pip(
    tmp_path: Path, wheel: Path
) -> None:
    # This venv's Python has pip (the test extra brings it), so setup.sh takes the fast way.
    proc = _setup(tmp_path, sys.executable, "--no-index", "--no-deps", str(wheel))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    made = tmp_path / "venv"
    assert _has(made, "okstra_core.records")
    assert not _has(made, "pip"), "the fast way makes the venv without ensurepip"


@pytest.mark.slow
def test_a_reused_venv_without_pip_and_a_python_without_pip_get_pip_first(
    tmp_path: Path, wheel: Path
) -> None:
    bare = tmp_path / "bare"
    venv.EnvBuilder(with_pip=False).create(bare)
    venv.EnvBuilder(with_pip=False).create(tmp_path / "venv")
    proc = _setup(tmp_path, str(bare / "bin" / "python"), "--no-index", "--no-deps", str(wheel))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "reusing" in proc.stdout
    assert _has(tmp_path / "venv", "pip") and _has(tmp_path / "venv", "okstra_core.records")
