"""scripts/setup.sh (README command 1's install part): what it says when it cannot work.

The install itself (a venv and `pip install .`, with the index) is measured end to end
by `python -m bench --only h`; here are the refusals, which must name the problem and
exit 2 before anything is created.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "setup.sh"


def _setup(tmp_path: Path, python: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHON": python,
        "OKSTRA_VENV": str(tmp_path / "venv"),
        "PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin",
    }
    return subprocess.run(
        ["bash", str(SCRIPT)],
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
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
