"""Companion files of v1 state: naming, collisions, digest matching, read-only source."""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from legacy_support import LegacyWorld

from okstra_core.compat import companion_for, open_legacy
from okstra_core.store import atomic_write_json

NAME = "rd_spawn_workers_models.json"


def _load(world: LegacyWorld, path: Path) -> tuple[Path, dict[str, Any], bool]:
    opened = open_legacy(
        path,
        profile_loader=world.profile,
        pool=world.pool,
        scopes=world.scopes,
        environment=world.environment,
    )
    return opened.companion, opened.state, opened.resumed


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _foreign(path: Path, *, source_path: str = "/elsewhere/other.json", sha: str = "") -> None:
    """Put another source's companion at `path`."""
    atomic_write_json(
        path,
        {"executionIdentityVersion": 2, "legacySource": {"path": source_path, "sha256": sha}},
    )


def test_fresh_companion_is_the_content_addressed_name(v1_copy: Callable[[str], Path]) -> None:
    v1 = v1_copy(NAME)
    path, exists = companion_for(v1, v1.read_bytes())
    assert path == v1.parent / f"{NAME}.v2.{_digest(v1)}.json"
    assert not exists
    assert not path.exists()


def test_saved_companion_is_resumed_by_digest(
    world: LegacyWorld, v1_copy: Callable[[str], Path]
) -> None:
    v1 = v1_copy(NAME)
    companion, state, resumed = _load(world, v1)
    assert not resumed
    # The engine answers a step and saves; the next open resumes exactly that.
    state["directive"] = "changed in v2"
    state["revision"] = 4
    atomic_write_json(companion, state)

    again, resumed_state, resumed = _load(world, v1)
    assert resumed
    assert again == companion
    assert resumed_state == state
    assert companion_for(v1, v1.read_bytes()) == (companion, True)


def test_name_taken_by_another_source_is_numbered(v1_copy: Callable[[str], Path]) -> None:
    v1 = v1_copy(NAME)
    data = v1.read_bytes()
    digest = _digest(v1)
    canonical = v1.parent / f"{NAME}.v2.{digest}.json"
    _foreign(canonical, sha=digest)  # same bytes, another file path

    first, exists = companion_for(v1, data)
    assert (first.name, exists) == (f"{NAME}.v2.{digest}.1.json", False)

    _foreign(first, sha="f" * 64)  # a different digest at .1: also someone else's
    second, exists = companion_for(v1, data)
    assert (second.name, exists) == (f"{NAME}.v2.{digest}.2.json", False)

    atomic_write_json(second, {"legacySource": {"path": str(v1.resolve()), "sha256": digest}})
    assert companion_for(v1, data) == (second, True)


def test_unparsable_file_at_the_name_is_not_ours(v1_copy: Callable[[str], Path]) -> None:
    v1 = v1_copy(NAME)
    canonical = v1.parent / f"{NAME}.v2.{_digest(v1)}.json"
    canonical.write_bytes(b"\x00garbage")
    path, exists = companion_for(v1, v1.read_bytes())
    assert path.name.endswith(".1.json") and not exists
    assert canonical.read_bytes() == b"\x00garbage"


def test_numbered_companion_is_found_past_gaps(v1_copy: Callable[[str], Path]) -> None:
    v1 = v1_copy(NAME)
    digest = _digest(v1)
    record = {"path": str(v1.resolve()), "sha256": digest}
    _foreign(v1.parent / f"{NAME}.v2.{digest}.json", sha=digest)
    ours = v1.parent / f"{NAME}.v2.{digest}.3.json"
    atomic_write_json(ours, {"legacySource": record})
    assert companion_for(v1, v1.read_bytes()) == (ours, True)
    # ... and when the canonical name is gone altogether.
    (v1.parent / f"{NAME}.v2.{digest}.json").unlink()
    assert companion_for(v1, v1.read_bytes()) == (ours, True)


def test_first_free_number_skips_taken_ones(v1_copy: Callable[[str], Path]) -> None:
    v1 = v1_copy(NAME)
    digest = _digest(v1)
    _foreign(v1.parent / f"{NAME}.v2.{digest}.json", sha=digest)
    _foreign(v1.parent / f"{NAME}.v2.{digest}.1.json", sha=digest)
    (v1.parent / f"{NAME}.v2.{digest}.2.json").write_text("{}")
    path, exists = companion_for(v1, v1.read_bytes())
    assert (path.name, exists) == (f"{NAME}.v2.{digest}.3.json", False)


def test_same_bytes_elsewhere_is_another_source(
    world: LegacyWorld, v1_copy: Callable[[str], Path], tmp_path: Path
) -> None:
    v1 = v1_copy(NAME)
    companion, state, _ = _load(world, v1)
    atomic_write_json(companion, state)
    # A copy of the v1 file, with a copy of its companion, in another directory.
    other_dir = tmp_path / "copy"
    other_dir.mkdir()
    other = other_dir / NAME
    shutil.copyfile(v1, other)
    shutil.copyfile(companion, other_dir / companion.name)

    path, fresh, resumed = _load(world, other)
    assert not resumed
    assert path.name == f"{NAME}.v2.{_digest(v1)}.1.json"
    assert fresh["legacySource"]["path"] == str(other.resolve())


def test_changed_v1_bytes_start_a_fresh_conversion(
    world: LegacyWorld, v1_copy: Callable[[str], Path]
) -> None:
    v1 = v1_copy(NAME)
    companion, state, _ = _load(world, v1)
    state["revision"] = 9
    atomic_write_json(companion, state)
    saved = companion.read_bytes()

    raw = orjson.loads(v1.read_bytes())
    raw["claude_model"] = "sonnet"
    v1.write_bytes(orjson.dumps(raw))  # someone edits the v1 file by hand

    new_companion, fresh, resumed = _load(world, v1)
    assert not resumed
    assert new_companion != companion
    assert new_companion.name == f"{NAME}.v2.{_digest(v1)}.json"
    assert fresh["revision"] == 0
    assert fresh["roleModels"]["analyser"][0] == "claude/sonnet-4.6"
    assert fresh["legacySource"]["sha256"] == _digest(v1)
    assert companion.read_bytes() == saved  # the old progress is left as it was


def test_v1_bytes_are_never_modified(world: LegacyWorld, v1_copy: Callable[[str], Path]) -> None:
    v1 = v1_copy(NAME)
    os.chmod(v1, 0o444)  # a write attempt would fail loudly
    before = v1.read_bytes()
    stat = v1.stat()

    companion, state, _ = _load(world, v1)
    atomic_write_json(companion, state)
    _load(world, v1)

    assert v1.read_bytes() == before
    after = v1.stat()
    assert (after.st_mtime_ns, after.st_ino, after.st_mode) == (
        stat.st_mtime_ns,
        stat.st_ino,
        stat.st_mode,
    )
