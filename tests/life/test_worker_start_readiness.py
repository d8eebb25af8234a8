"""`okstra worker start` reads the one readiness verdict: a CLI known to be logged out
is refused (exit 2, its provider's login hint, nothing changed); one whose login
okstra cannot tell starts, with a note."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from worker_support import World, eventually

CODEX = "codex/gpt-5.6-sol"
# In front of the fake codex: `codex login status` answers like the real one logged out.
LOGGED_OUT = """#!/bin/sh
if [ "$1 $2" = "login status" ]; then echo "Not logged in" >&2; exit 1; fi
exec "{real}" "$@"
"""


@pytest.fixture
def world(tmp_path: Path) -> World:
    w = World(tmp_path)
    w.prepare("--role-model", f"analyser={CODEX}")
    return w


def _snapshot(world: World) -> dict[str, bytes]:
    root = world.project / ".okstra"
    return {str(p): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_logged_out_cli_is_refused_with_its_login_hint(world: World, tmp_path: Path) -> None:
    real = tmp_path / "codex-real"
    (world.bin / "codex").rename(real)
    front = world.bin / "codex"
    front.write_text(LOGGED_OUT.format(real=real), encoding="utf-8")
    front.chmod(front.stat().st_mode | stat.S_IXUSR)
    before = _snapshot(world)
    proc = world.okstra("worker", "start", world.run, "analyser#1", "--prompt", "x")
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    err = proc.stderr.decode()
    assert "analyser#1: `codex` is not logged in" in err and "codex login" in err, err
    assert _snapshot(world) == before


def test_a_login_okstra_cannot_tell_starts_with_a_note(world: World) -> None:
    # The fake's `login status` answers nothing okstra understands.
    code, started = world.start("analyser#1", "Say hello.")
    assert code == 0, started
    assert any("cannot tell whether `codex` is logged in" in n for n in started["notes"]), started
    eventually(
        lambda: (world.worker_dir(started["roleExecutionRef"]) / "exit.json").exists(),
        "the worker's end",
    )
