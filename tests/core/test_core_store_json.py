"""The store's shared readers: every failure names the file, in the caller's error class."""

from __future__ import annotations

from pathlib import Path

import pytest

from okstra_core.errors import DataFileError, OkstraError, StateFileError
from okstra_core.store import parse_json, parse_json_object, read_bytes


def test_truncated_json_says_so(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    with pytest.raises(StateFileError, match=r"line 1, column \d+ \(the file looks truncated\)"):
        parse_json_object(b'{"a": [1, 2', path, error=StateFileError)


def test_garbage_json_is_not_called_truncated(tmp_path: Path) -> None:
    with pytest.raises(OkstraError) as info:
        parse_json(b"{nope}", tmp_path / "x.json", what="answers file")
    assert "truncated" not in info.value.message
    assert "answers file" in info.value.message


def test_non_object_and_non_utf8_are_named(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    with pytest.raises(DataFileError, match="expected a JSON object, got an array") as info:
        parse_json_object(b"[1]", path, error=DataFileError)
    assert info.value.path == str(path)
    with pytest.raises(DataFileError, match=r"not valid UTF-8 \(line 2, byte 2\)"):
        parse_json_object(b"{\n\xff}", path, error=DataFileError)


def test_read_bytes_errors_use_the_callers_class(tmp_path: Path) -> None:
    with pytest.raises(StateFileError, match="wizard state file not found"):
        read_bytes(tmp_path / "missing.json", what="wizard state file", error=StateFileError)
    with pytest.raises(DataFileError, match="is a directory: expected a regular file"):
        read_bytes(tmp_path, error=DataFileError)
