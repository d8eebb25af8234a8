"""The core never imports Textual.

Every check runs in a fresh interpreter, because this test process has long since
imported textual for the UI tests. The subprocesses run from a temporary directory so
the checkout is not on sys.path: what is checked is the installed package.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import okstra_core

# The core may import neither; the `okstra` command itself lives in okstra_tui.entry,
# so a headless command may import okstra_tui but never textual.
FORBIDDEN = ("textual", "okstra_tui")

# Imports every module under okstra_core (found on disk, so a sub-package missing its
# __init__.py is caught too), then reports import failures and forbidden modules.
IMPORT_ALL = r"""
import importlib, json, sys, traceback
from pathlib import Path

import okstra_core

root = Path(okstra_core.__file__).parent
names = []
for path in sorted(root.rglob("*.py")):
    rel = path.relative_to(root)
    if "_data" in rel.parts or path.name == "__main__.py":
        continue
    parts = ["okstra_core", *rel.with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    names.append(".".join(parts))
failed = {}
for name in names:
    try:
        importlib.import_module(name)
    except Exception:
        failed[name] = traceback.format_exc(limit=3)
loaded = sorted(m for m in sys.modules if m.split(".")[0] in FORBIDDEN)
print(json.dumps({"modules": names, "failed": failed, "loaded": loaded}))
""".replace("FORBIDDEN", repr(FORBIDDEN))

# Headless invocations of the installed command. Whether each one succeeds is the
# business of the protocol tests; here only what it imports matters.
HEADLESS = [
    ["--version"],
    ["--help"],
    ["models", "--help"],
    ["models"],
    ["team", "--help"],
    ["wizard", "--help"],
    ["wizard", "schema"],
    ["wizard", "list"],
    ["prepare", "--help"],
    ["report", "--help"],
]


def _run(argv: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **env}
    full_env.pop("PYTHONPATH", None)
    return subprocess.run(
        argv,
        cwd=cwd,
        env=full_env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _okstra() -> list[str]:
    exe = Path(sys.executable).parent / "okstra"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "okstra_tui"]


def _imported_modules(importtime_stderr: str) -> set[str]:
    """Module names from `-X importtime` output ("import time: self | cumul | name")."""
    names = set()
    for line in importtime_stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name and name != "imported package":
                names.add(name)
    return names


def test_every_core_module_imports_without_textual(tmp_path: Path) -> None:
    proc = _run([sys.executable, "-c", IMPORT_ALL], tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    # The walk must have found the package's real modules, not an empty directory.
    assert {"okstra_core", "okstra_core.errors", "okstra_core.cli"} <= set(report["modules"])
    assert report["failed"] == {}, "core modules that fail to import:\n" + "\n".join(
        f"{name}:\n{tb}" for name, tb in report["failed"].items()
    )
    assert report["loaded"] == [], f"okstra_core pulled in {report['loaded']}"


def test_core_modules_come_from_the_same_install(tmp_path: Path) -> None:
    # The subprocess must check the copy this test run imports, or the test above
    # could pass against a stale install.
    proc = _run([sys.executable, "-c", "import okstra_core; print(okstra_core.__file__)"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()).resolve() == Path(okstra_core.__file__).resolve()


@pytest.mark.parametrize("argv", HEADLESS, ids=" ".join)
def test_headless_command_never_imports_textual(argv: list[str], tmp_path: Path) -> None:
    proc = _run([*_okstra(), *argv], tmp_path, PYTHONPROFILEIMPORTTIME="1")
    modules = _imported_modules(proc.stderr)
    # Proves the import log was captured at all (otherwise "no textual" is vacuous).
    assert "okstra_core.cli" in modules, proc.stderr[-2000:]
    leaked = sorted(m for m in modules if m.split(".")[0] == "textual")
    assert leaked == [], f"`okstra {' '.join(argv)}` imported {leaked[:5]}"


def test_importtime_parser_sees_textual_when_it_is_imported(tmp_path: Path) -> None:
    # The parser above must be able to see textual, or the headless test proves nothing.
    proc = _run(
        [sys.executable, "-X", "importtime", "-c", "import textual.app"],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert {"textual", "textual.app"} <= _imported_modules(proc.stderr)
