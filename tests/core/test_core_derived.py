"""`okstra_core.derived`: one key recipe, one entry format, one trust rule, one pruning rule.

Real files in a real cache directory: entries are renamed, copied, torn, opened up to
everyone and given to another owner the way a mistake or another user could, and each
is a miss, never an error.
"""

from __future__ import annotations

import os
import shutil
import stat
import time
from pathlib import Path

import pytest

from okstra_core import derived

KIND = derived.Kind("sample", keep=3, code=("derived/__init__.py",))


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


def _entry(cache: Path, key: str) -> Path:
    return cache / KIND.name / f"{key}.entry"


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_kept_payload_is_recalled_from_private_directories(cache: Path) -> None:
    key = derived.key(KIND, "input", b"bytes")
    assert derived.recall(cache, KIND, key) is None
    derived.keep(cache, KIND, key, b"payload")
    assert derived.recall(cache, KIND, key) == b"payload"
    assert _mode(cache) == _mode(cache / KIND.name) == 0o700
    assert _mode(_entry(cache, key)) == 0o600
    derived.keep_value(cache, KIND, key, {"a": [1, 2]})
    assert derived.recall_value(cache, KIND, key, dict) == {"a": [1, 2]}
    assert derived.recall_value(cache, KIND, key, list) is None  # not the type asked for


def test_the_key_covers_every_input_and_the_kind() -> None:
    assert derived.key(KIND, "a", b"b") == derived.key(KIND, "a", b"b")
    others = {
        derived.key(KIND, "a", b"b "),
        derived.key(KIND, "ab", b""),  # inputs are length-prefixed: no shifting bytes
        derived.key(KIND, "a", None),
        derived.key(KIND, "a", b""),
        derived.key(KIND, "a"),
        derived.key(derived.Kind("other", code=KIND.code), "a", b"b"),
    }
    assert len(others) == 6 and derived.key(KIND, "a", b"b") not in others


@pytest.mark.parametrize("move", [os.rename, shutil.copyfile])
def test_an_entry_under_another_keys_name_is_a_miss(cache: Path, move: object) -> None:
    mine, other = derived.key(KIND, b"mine"), derived.key(KIND, b"other")
    derived.keep(cache, KIND, mine, b"vouches for mine")
    move(_entry(cache, mine), _entry(cache, other))  # type: ignore[operator]
    assert derived.recall(cache, KIND, other) is None
    # Another kind's entry, under this kind's directory, is a miss too.
    shutil.rmtree(cache / KIND.name)
    derived.keep(cache, derived.Kind("elsewhere"), mine, b"x")
    os.rename(cache / "elsewhere", cache / KIND.name)
    assert derived.recall(cache, KIND, mine) is None


@pytest.mark.parametrize("damage", ["truncated", "torn", "flipped", "empty", "other format"])
def test_a_damaged_entry_is_a_miss(cache: Path, damage: str) -> None:
    key = derived.key(KIND, b"x")
    derived.keep(cache, KIND, key, b"p" * 1000)
    entry = _entry(cache, key)
    blob = entry.read_bytes()
    damaged = {
        "truncated": blob[:-1],
        "torn": blob[: len(blob) // 2],
        "flipped": blob[:-5] + b"q" + blob[-4:],
        "empty": b"",
        "other format": blob.replace(derived.FORMAT, b"okstra-derived 2", 1),
    }[damage]
    entry.write_bytes(damaged)
    assert derived.recall(cache, KIND, key) is None
    derived.keep(cache, KIND, key, b"p" * 1000)  # rewritten whole by the next keep
    assert derived.recall(cache, KIND, key) == b"p" * 1000


@pytest.mark.parametrize("which", ["cache", "kind"])
def test_a_directory_others_may_write_is_never_read_nor_written(cache: Path, which: str) -> None:
    key = derived.key(KIND, b"x")
    derived.keep(cache, KIND, key, b"payload")
    directory = cache if which == "cache" else cache / KIND.name
    directory.chmod(0o777)
    assert derived.recall(cache, KIND, key) is None
    other = derived.key(KIND, b"y")
    derived.keep(cache, KIND, other, b"payload")  # no error, and nothing written
    assert not _entry(cache, other).exists()
    assert _mode(directory) == 0o777  # left as the user set it
    directory.chmod(0o700)
    assert derived.recall(cache, KIND, key) == b"payload"


def test_a_directory_of_another_owner_is_not_trusted(cache: Path) -> None:
    if os.getuid() != 0:
        pytest.skip("giving a directory to another owner needs root")
    key = derived.key(KIND, b"x")
    derived.keep(cache, KIND, key, b"payload")
    os.chown(cache / KIND.name, 4242, 4242)
    assert derived.recall(cache, KIND, key) is None
    os.chown(cache / KIND.name, 0, 0)
    os.chown(_entry(cache, key), 4242, 4242)
    assert derived.recall(cache, KIND, key) is None


def test_links_are_never_followed(cache: Path, tmp_path: Path) -> None:
    key = derived.key(KIND, b"x")
    derived.keep(cache, KIND, key, b"payload")
    # The kind's directory as a link to a private directory holding the same entry.
    elsewhere = tmp_path / "elsewhere"
    (cache / KIND.name).rename(elsewhere)
    (cache / KIND.name).symlink_to(elsewhere)
    assert derived.recall(cache, KIND, key) is None
    # The entry itself as a link.
    (cache / KIND.name).unlink()
    elsewhere.rename(cache / KIND.name)
    target = tmp_path / "target.entry"
    _entry(cache, key).rename(target)
    _entry(cache, key).symlink_to(target)
    assert derived.recall(cache, KIND, key) is None


def test_an_entry_others_may_write_is_a_miss(cache: Path) -> None:
    key = derived.key(KIND, b"x")
    derived.keep(cache, KIND, key, b"payload")
    _entry(cache, key).chmod(0o622)
    assert derived.recall(cache, KIND, key) is None


def test_pruning_keeps_the_directory_bounded(cache: Path) -> None:
    keys = [derived.key(KIND, str(n)) for n in range(10)]
    for n, key in enumerate(keys):
        derived.keep(cache, KIND, key, b"payload")
        stamp = time.time() - 100 + n  # each newer than the last, whatever the clock's grain
        os.utime(_entry(cache, key), (stamp, stamp))
    directory = cache / KIND.name
    left = sorted(p.name for p in directory.iterdir())
    assert left == sorted(f"{key}.entry" for key in keys[-3:])  # the newest three
    # Leftovers of a writer that died an hour ago, and files of an older format, go too;
    # another writer's fresh temporary file stays.
    stale, fresh, old = directory / "a.1.2.part", directory / "b.3.4.part", directory / "c.pickle"
    for path in (stale, fresh, old):
        path.write_bytes(b"")
    os.utime(stale, (time.time() - 7200, time.time() - 7200))
    derived.keep(cache, KIND, derived.key(KIND, "new"), b"payload")
    assert not stale.exists() and not old.exists() and fresh.exists()
    assert len(list(directory.glob("*.entry"))) == 3


def test_an_unusable_cache_only_costs_time(cache: Path) -> None:
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text("a file where the cache directory goes", encoding="utf-8")
    key = derived.key(KIND, b"x")
    derived.keep(cache, KIND, key, b"payload")
    assert derived.recall(cache, KIND, key) is None
    assert derived.recall_value(cache, KIND, key, dict) is None
    derived.keep_value(cache, KIND, key, lambda: None)  # cannot be pickled: not kept
