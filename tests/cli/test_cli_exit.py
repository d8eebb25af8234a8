"""A headless command ends at once after its output (`okstra_tui.entry.cli`).

The interpreter's teardown is skipped, not the command's work: the output arrives
whole, the exit status is the command's, and exit handlers have run.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def _okstra(args: list[str], home: Path, **kw: object) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["OKSTRA_HOME"] = str(home)
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        [sys.executable, "-m", "okstra_tui", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        **kw,
    )


# The console script's path, with an exit handler registered first that leaves a mark.
WITH_EXIT_HANDLER = """
import atexit, sys
mark = sys.argv.pop()
atexit.register(lambda: open(mark, "w").write("ran"))
from okstra_tui.entry import cli
sys.argv = ["okstra", *sys.argv[1:]]
cli()
"""


def test_output_is_whole_and_exit_handlers_ran(tmp_path: Path) -> None:
    home = tmp_path / "home"
    proc = _okstra(["wizard", "schema"], home)
    assert proc.returncode == 0, proc.stderr
    schemas = json.loads(proc.stdout)["schemas"]  # the whole document, parseable
    assert {"prompt", "answers", "outcome"} <= set(schemas)
    mark = tmp_path / "exit-handler-ran"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["OKSTRA_HOME"] = str(home)
    proc = subprocess.run(
        [sys.executable, "-c", WITH_EXIT_HANDLER, "wizard", "schema", str(mark)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["schemas"]
    assert mark.read_text(encoding="utf-8") == "ran"  # before the quick exit


def test_the_commands_exit_status_is_kept(tmp_path: Path) -> None:
    home = tmp_path / "home"
    missing = tmp_path / "absent.json"
    proc = _okstra(["wizard", "show", "--state", str(missing)], home)
    assert proc.returncode == 2
    assert json.loads(proc.stdout)["ok"] is False


def test_a_reader_that_goes_away_still_gives_141(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["OKSTRA_HOME"] = str(home)
    reader = subprocess.Popen(
        [sys.executable, "-m", "okstra_tui", "wizard", "schema"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert reader.stdout is not None
    reader.stdout.read(10)
    reader.stdout.close()  # the reader goes away before the output ends
    _out, err = reader.communicate(timeout=60)
    assert reader.returncode in (0, 141), err  # 0 if it all fit in the pipe first
    assert b"Traceback" not in err


def test_a_command_that_is_not_headless_exits_the_usual_way(tmp_path: Path) -> None:
    proc = _okstra(["--version"], tmp_path / "home")
    assert proc.returncode == 0
    assert proc.stdout.startswith("okstra ")


def test_main_in_process_gives_the_collector_back(
    okstra_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from okstra_tui.entry import main

    assert gc.isenabled()
    assert main(["wizard", "schema"]) == 0  # a headless command: run without collecting
    assert gc.isenabled()
    assert json.loads(capsys.readouterr().out)["ok"] is True
