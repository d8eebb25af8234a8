"""What the import contract cannot see: the modules a process actually loads.

The layers themselves — the core's rooms and the app's modules, top to bottom, no
cycles, the core without Textual — are the import-linter contract in `pyproject.toml`
(`[tool.importlinter]`), checked by `lint-imports` in `scripts/test.sh`. A name loaded
on first use (`okstra_core.lazy`) is no import statement, so what preparing a run loads
is checked here in a fresh interpreter (`test_no_textual.py` does the same for Textual).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

CHECK = r"""
import json, sys
import okstra_core.prepare, okstra_core.prepare.pipeline, okstra_core.life.report
import okstra_core.documents, okstra_core.request, okstra_core.cli.roleargs
okstra_core.prepare.prepare, okstra_core.prepare.PlannedFile
print(json.dumps(sorted(m for m in sys.modules if m.startswith(("okstra_core.wizard", "jinja2")))))
"""


def test_prepare_loads_no_wizard_module(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHECK],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert json.loads(done.stdout) == []
