"""`okstra_core.records`: the dataclass code cache, and `environment.which`."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from okstra_core import records
from okstra_core.environment import which

OPTIONS: list[dict[str, Any]] = [
    {},
    {"frozen": True},
    {"frozen": True, "kw_only": True},
    {"eq": False},
    {"repr": False, "eq": False},
    {"order": True},
    {"unsafe_hash": True},
    {"slots": True},
    {"frozen": True, "slots": True},
]


def _make(decorator: Any, options: dict[str, Any]) -> type[Any]:
    # A class body written once, decorated twice: by `dataclasses` and by `records`.
    namespace: dict[str, Any] = {
        "__annotations__": {"a": "int", "b": "str", "c": "list[int]"},
        "b": "",
        "c": dataclasses.field(default_factory=list),
        "__module__": __name__,
    }
    cls = type("Sample", (), namespace)
    return decorator(**options)(cls)  # type: ignore[no-any-return]


def _codes(cls: type[Any]) -> dict[str, tuple[Any, ...]]:
    out: dict[str, tuple[Any, ...]] = {}
    for name, value in vars(cls).items():
        code = getattr(value, "__code__", None)
        if code is not None:
            out[name] = (code.co_code, code.co_consts, code.co_names, code.co_varnames)
    return out


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(o) or "plain")
def test_records_dataclass_makes_the_very_methods_dataclasses_makes(
    options: dict[str, Any],
) -> None:
    ours = _make(records.dataclass, options)
    theirs = _make(dataclasses.dataclass, options)
    assert _codes(ours) == _codes(theirs)
    assert [f.name for f in dataclasses.fields(ours)] == ["a", "b", "c"]
    kwargs = {"a": 1, "b": "x"}
    one, other = ours(**kwargs), ours(**kwargs)
    if options.get("repr", True):
        assert repr(one) == repr(theirs(**kwargs)) == "Sample(a=1, b='x', c=[])"
    assert (one == other) is (options.get("eq", True))
    if options.get("frozen"):
        with pytest.raises(dataclasses.FrozenInstanceError):
            one.a = 2  # type: ignore[misc]
    if options.get("kw_only"):
        with pytest.raises(TypeError):
            ours(1)


def test_the_cache_is_used_only_on_pythons_whose_dataclasses_it_matches() -> None:
    expected = sys.version_info[:2] in ((3, 11), (3, 12))
    assert records._PATCHABLE is expected


def _import_reporting(env: dict[str, str]) -> dict[str, Any]:
    code = (
        "import json, sys\n"
        "import okstra_core.wizard.engine\n"
        "from okstra_core import records\n"
        "print(json.dumps({'new': records._NEW, 'known': len(records._CODES or {})}))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


@pytest.mark.skipif(not records._PATCHABLE, reason="no code cache on this Python")
def test_a_second_process_compiles_nothing_and_a_foreign_cache_is_ignored(
    okstra_home: Path,
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["OKSTRA_HOME"] = str(okstra_home)
    first = _import_reporting(env)
    assert first["new"] > 0  # a cold cache: everything compiled, stored at exit
    (entry,) = (okstra_home / "cache" / "code").glob("dataclasses-*.marshal")
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600
    second = _import_reporting(env)
    assert second == {"new": 0, "known": first["known"]}

    # Writable by others: not trusted (compiled again, and replaced by a private one).
    entry.chmod(0o666)
    assert _import_reporting(env)["new"] > 0
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600
    # A changed byte: the checksum no longer matches.
    blob = bytearray(entry.read_bytes())
    blob[-1] ^= 0xFF
    entry.write_bytes(bytes(blob))
    assert _import_reporting(env)["new"] > 0
    assert _import_reporting(env)["new"] == 0
    # A link in its place is not followed.
    entry.unlink()
    target = okstra_home / "elsewhere.marshal"
    target.write_bytes(b"okstra-dataclass-code 1\n")
    entry.symlink_to(target)
    assert _import_reporting(env)["new"] > 0


# ---------------------------------------------------------------------------- which


def _tree(tmp_path: Path) -> dict[str, Path]:
    made: dict[str, Path] = {}
    for name, mode in (("a", 0o755), ("b", 0o755), ("c", 0o644)):
        directory = tmp_path / name
        directory.mkdir()
        made[name] = directory
        for tool in ("tool", "other"):
            path = directory / tool
            path.write_text("#!/bin/sh\n", encoding="utf-8")
            path.chmod(mode)
    (made["a"] / "dir").mkdir()
    return made


@settings(max_examples=60, deadline=None)
@given(
    entries=st.lists(st.sampled_from(["a", "b", "c", "missing", ""]), max_size=5),
    command=st.sampled_from(["tool", "other", "dir", "nothing", "a/tool", "c/tool"]),
)
def test_which_agrees_with_shutil_which(
    tmp_path_factory: pytest.TempPathFactory, entries: list[str], command: str
) -> None:
    root = tmp_path_factory.mktemp("which")
    _tree(root)
    path = os.pathsep.join(str(root / e) if e else "" for e in entries)
    here = os.getcwd()
    os.chdir(root)  # an empty PATH entry and a relative command are the current directory
    try:
        assert which(command, path) == shutil.which(command, path=path)
    finally:
        os.chdir(here)


def test_place_names_a_problem_as_messages_do() -> None:
    from okstra_core.records import place

    assert place(()) == ""
    assert place(("answered", 2, "step")) == "answered[2].step"
    assert place(("roleModels", "analyser", "[key]")) == "roleModels.analyser"
    assert place((0, "id")) == "[0].id"
