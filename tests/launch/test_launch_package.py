"""`okstra_core.launch` loads its modules on first use, and its names stay its own.

Each check runs in a fresh interpreter: what is imported, and in which order, is the
point.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import okstra_core.launch


def _run(code: str, cwd: Path) -> object:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_every_public_name_resolves_from_its_module(tmp_path: Path) -> None:
    code = """
import json, types
import okstra_core.launch as launch
bad = [n for n in launch.__all__ if isinstance(getattr(launch, n), types.ModuleType)]
print(json.dumps({"bad": bad, "names": len(launch.__all__), "lazy": sorted(launch._LAZY)}))
"""
    got = _run(code, tmp_path)
    assert isinstance(got, dict)
    assert got["bad"] == [] and got["names"] > 20
    # Every public name is loaded by name, none is forgotten.
    assert got["lazy"] == sorted(okstra_core.launch.__all__)


@pytest.mark.parametrize(
    "first",
    [
        "import okstra_core.launch.checks",
        "from okstra_core.launch.checks import RoleInstance",
        "import okstra_core.life.doctor",
        "from okstra_core.launch import RoleInstance",
        "pass",
    ],
)
def test_preflight_stays_the_function_whatever_loads_first(tmp_path: Path, first: str) -> None:
    code = f"""
import json, sys
{first}
import okstra_core.launch as launch
from okstra_core.launch import preflight
print(json.dumps([callable(launch.preflight), launch.preflight is preflight,
                  type(preflight).__name__, type(launch) is type(sys),
                  type(sys.modules["okstra_core.launch.checks"]).__name__]))
"""
    assert _run(code, tmp_path) == [True, True, "function", True, "module"]


def test_no_public_name_is_also_a_module_of_the_package() -> None:
    # A module named like a package attribute would replace it when it loads (the
    # import system sets a loaded submodule as its package's attribute).
    modules = {p.stem for p in Path(okstra_core.launch.__file__).parent.glob("*.py")}
    assert modules & set(okstra_core.launch.__all__) == set()


def test_planning_a_launch_loads_nothing_that_runs_processes(tmp_path: Path) -> None:
    code = """
import json, sys
from okstra_core.launch import ResumeEntry, choose_backend, plan_launch, tmux_commands
print(json.dumps(sorted(m for m in ("subprocess", "concurrent.futures", "logging",
      "okstra_core.launch.checks", "okstra_core.launch.backends") if m in sys.modules)))
"""
    assert _run(code, tmp_path) == []
