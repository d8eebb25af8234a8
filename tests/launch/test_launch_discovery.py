"""Discovering the session id a CLI minted itself (codex rollout files)."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from launch_helpers import bundled

from okstra_core.catalog.models import DiscoverSpec
from okstra_core.environment import Environment
from okstra_core.errors import DataFileError
from okstra_core.launch import discover_session, find_session_once

ID_A = "019a0000-0000-7000-8000-00000000000a"
ID_B = "019a0000-0000-7000-8000-00000000000b"
ID_C = "019a0000-0000-7000-8000-00000000000c"


def _rollout(home: Path, sid: str, cwd: Path, mtime: datetime, *, day: str = "2026/01/02") -> Path:
    path = home / "sessions" / day / f"rollout-2026-01-02T10-00-00-{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {"type": "session_meta", "payload": {"id": sid, "cwd": str(cwd)}}
    path.write_text(json.dumps(meta) + "\n{}\n", encoding="utf-8")
    os.utime(path, (mtime.timestamp(), mtime.timestamp()))
    return path


def test_newest_matching_rollout_after_launch_wins(tmp_path: Path) -> None:
    spec = bundled("codex").launch.discover
    assert spec is not None
    home, project, other = tmp_path / "codex", tmp_path / "proj", tmp_path / "other"
    project.mkdir()
    launched = datetime.now(UTC)
    _rollout(home, ID_A, project, launched - timedelta(seconds=30))  # an older session
    _rollout(home, ID_C, other, launched + timedelta(seconds=3))  # another project
    env = Environment(env={"CODEX_HOME": str(home)})
    assert find_session_once(spec, project, launched, env) is None
    _rollout(home, ID_B, project, launched + timedelta(seconds=1), day="2026/01/03")
    assert discover_session(spec, project, launched, env, timeout=0) == ID_B
    # The cwd match goes through symlinks.
    link = tmp_path / "link"
    link.symlink_to(project)
    assert find_session_once(spec, link, launched, env) == ID_B


def test_default_home_and_half_written_files(tmp_path: Path) -> None:
    spec = bundled("codex").launch.discover
    assert spec is not None
    home = tmp_path / "h"
    launched = datetime.now(UTC) - timedelta(seconds=5)
    partial = home / ".codex" / "sessions" / "2026" / f"rollout-x-{ID_A}.jsonl"
    partial.parent.mkdir(parents=True)
    partial.write_text('{"type": "session_meta", "payl', encoding="utf-8")
    env = Environment(env={"HOME": str(home)})  # CODEX_HOME unset → default_home ~/.codex
    assert find_session_once(spec, tmp_path, launched, env) is None
    _rollout(home / ".codex", ID_B, tmp_path, datetime.now(UTC))
    assert find_session_once(spec, tmp_path, launched, env) == ID_B


def test_waits_then_gives_up(tmp_path: Path) -> None:
    spec = DiscoverSpec(
        glob="{env.CODEX_HOME}/sessions/**/rollout-*-{id}.jsonl",
        id_pattern=r"rollout-.*-([0-9a-f-]{36})\.jsonl$",
        timeout_seconds=0.3,
    )
    env = Environment(env={"CODEX_HOME": str(tmp_path)})
    naps: list[float] = []
    started = datetime.now(UTC)
    assert (
        discover_session(spec, tmp_path, started, env, sleep=naps.append, clock=lambda: sum(naps))
        is None
    )
    assert len(naps) == 2 and sum(naps) == pytest.approx(0.3)

    def appear(_: float) -> None:
        _rollout(tmp_path, ID_C, tmp_path, datetime.now(UTC) + timedelta(seconds=1))

    assert discover_session(spec, tmp_path, started, env, timeout=5, sleep=appear) == ID_C


def test_bad_rules_are_data_errors(tmp_path: Path) -> None:
    env = Environment(env={})
    now = datetime.now(UTC)
    with pytest.raises(DataFileError, match="CODEX_HOME is not set"):
        discover_session(
            DiscoverSpec(glob="{env.CODEX_HOME}/x", id_pattern="(x)"), tmp_path, now, env, timeout=0
        )
    with pytest.raises(DataFileError, match="one group"):
        discover_session(DiscoverSpec(glob="/x", id_pattern="x"), tmp_path, now, env)
    with pytest.raises(DataFileError, match="regular expression"):
        discover_session(DiscoverSpec(glob="/x", id_pattern="(x"), tmp_path, now, env)
