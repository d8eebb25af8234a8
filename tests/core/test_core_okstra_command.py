"""`Environment.okstra_command`: the command the start screen offers for another project."""

from __future__ import annotations

from pathlib import Path

from okstra_core.environment import Environment


def test_how_to_type_okstra_from_another_directory(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    here = Environment(env={"PATH": str(bin_dir)})
    venv_script = tmp_path / "checkout" / ".venv" / "bin" / "okstra"
    # Not on PATH (the README's `.venv/bin/okstra`): the script's absolute path.
    assert here.okstra_command(".venv/bin/okstra") == str(Path(".venv/bin/okstra").absolute())
    assert here.okstra_command(str(venv_script)) == str(venv_script)
    # `python -m okstra` started it, and no okstra on PATH: say so.
    module = tmp_path / "site" / "okstra" / "__main__.py"
    assert here.okstra_command(str(module)) == "python -m okstra"
    # One on PATH: its name is enough.
    (bin_dir / "okstra").write_text("#!/bin/sh\n")
    (bin_dir / "okstra").chmod(0o755)
    assert here.okstra_command(str(venv_script)) == "okstra"
    assert here.okstra_command(str(module)) == "okstra"
