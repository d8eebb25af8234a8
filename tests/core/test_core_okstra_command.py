"""`Environment.okstra_command`: how the lead prompt, the start screen and a worker's
commands name this okstra so that it runs wherever they are typed."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from okstra_core.environment import Environment


def _script(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\necho okstra\n")
    path.chmod(0o755)
    return path


def test_how_to_type_okstra_from_another_directory(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    here = Environment(env={"PATH": str(bin_dir)})
    python = str(tmp_path / "py" / "bin" / "python3")  # no okstra beside it
    venv_script = _script(tmp_path / "checkout" / ".venv" / "bin" / "okstra")
    # Not on PATH (the README's `.venv/bin/okstra`): the script's absolute path.
    relative = here.okstra_command(".venv/bin/okstra", python)
    assert relative == str(Path(".venv/bin/okstra").absolute())
    assert here.okstra_command(str(venv_script), python) == str(venv_script)
    # `python -m okstra` started it, no command of its own: this interpreter's -m.
    module = tmp_path / "site" / "okstra" / "__main__.py"
    assert here.okstra_command(str(module), python) == f"{python} -m okstra"
    # A module run of an interpreter with its okstra beside it: that command.
    venv_python = str(venv_script.parent / "python3")
    assert here.okstra_command(str(module), venv_python) == str(venv_script)
    # Another okstra on PATH is not this one: still the absolute path.
    _script(bin_dir / "okstra")
    assert here.okstra_command(str(venv_script), python) == str(venv_script)
    assert here.okstra_command(str(module), python) == f"{python} -m okstra"
    # This one on PATH: its name is enough.
    on_path = Environment(env={"PATH": f"{venv_script.parent}{os.pathsep}{bin_dir}"})
    assert on_path.okstra_command(str(venv_script), python) == "okstra"


def test_a_path_with_spaces_is_one_shell_word(tmp_path: Path) -> None:
    script = _script(tmp_path / "my venv" / "bin" / "okstra")
    command = Environment(env={"PATH": "/usr/bin:/bin"}).okstra_command(str(script))
    done = subprocess.run(
        ["sh", "-c", f"{command} worker status"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "okstra\n"


def test_okstras_directory_comes_first_on_the_team_path(tmp_path: Path) -> None:
    script = _script(tmp_path / "venv" / "bin" / "okstra")
    here = Environment(env={"PATH": f"/usr/bin:{script.parent}:/bin", "HOME": "/h"})
    env = here.okstra_first_env(argv0=str(script))
    assert env["PATH"] == f"{script.parent}:/usr/bin:/bin"
    assert env["HOME"] == "/h"
    # The environment itself is unchanged.
    assert here.env["PATH"] == f"/usr/bin:{script.parent}:/bin"
