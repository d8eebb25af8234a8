"""`okstra_core.records`: the standard dataclass, `place`, and `environment.which`."""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from okstra_core import records
from okstra_core.environment import which


def test_records_dataclass_is_the_standard_one() -> None:
    # No code cache, no patched `dataclasses`: a record is a plain dataclass, made by the
    # standard decorator (with its methods shared: `test_records_dataclass.py`).
    import inspect

    for name, value in vars(dataclasses).items():
        if inspect.isfunction(value):
            assert value.__module__ == "dataclasses", name
    assert records.field is dataclasses.field

    @records.dataclass(frozen=True, kw_only=True)
    class Point:
        x: int
        y: int = 0

    assert dataclasses.is_dataclass(Point)
    assert [f.name for f in dataclasses.fields(Point)] == ["x", "y"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        Point(x=1).x = 2  # type: ignore[misc]


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
