"""Setting two top-level keys of a final report, every other byte kept.

Re-encoding would change big integers, decimals and escapes: the report is only checked
as JSON, then the two values replaced in place (`check_target` says where it may be)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from ..errors import DataFileError, UsageError
from ..paths import user_dirs
from ..store import json_kind
from ..tasks import OKSTRA_DIR

_WHITE = " \t\n\r"
_DECODER = json.JSONDecoder()


def _string_end(text: str, at: int) -> tuple[str, int]:
    """The JSON string starting at `at` (its opening quote) and where it ends."""
    value, end = _DECODER.raw_decode(text, at)
    return str(value), end


def _beside_the_run(real: Path, run_dir: Path | None) -> bool:
    """A report file directly in the run's own directory, named as a report."""
    if run_dir is None or real.parent != Path(os.path.realpath(run_dir)):
        return False
    return real.suffix == ".json" and "report" in real.name


def check_target(path: Path, env: Mapping[str, str], run_dir: Path | None = None) -> None:
    """Refuse (`UsageError`) a report path that is one of okstra's own files, before reading."""
    real = Path(os.path.realpath(path))
    if OKSTRA_DIR in real.parts and not _beside_the_run(real, run_dir):
        raise UsageError(
            f"{path} is inside a {OKSTRA_DIR} directory: okstra's own files are not a final "
            "report (give the report the lead wrote: outside .okstra, or a *report*.json in the "
            "run's own directory)",
            field="--data",
        )
    dirs = user_dirs(env)
    roots = [dirs.config, dirs.data, dirs.state, dirs.cache]
    if env.get("OKSTRA_HOME"):
        roots.append(Path(env["OKSTRA_HOME"]).expanduser())
    for root in roots:
        top = os.path.realpath(root)
        if str(real) == top or str(real).startswith(top.rstrip(os.sep) + os.sep):
            raise UsageError(
                f"{path} is inside okstra's own directory {root}: not a final report",
                field="--data",
            )


def _skip_white(text: str, at: int) -> int:
    while at < len(text) and text[at] in _WHITE:
        at += 1
    return at


def _value_end(text: str, at: int) -> int:
    """Where the JSON value starting at `at` ends (the text is valid JSON)."""
    depth = 0
    while at < len(text):
        char = text[at]
        if char == '"':
            at = _string_end(text, at)[1]
            if depth == 0:
                return at
            continue
        if char in "[{":
            depth += 1
        elif char in "]}":
            if depth == 0:
                return at
            depth -= 1
            if depth == 0:
                return at + 1
        elif depth == 0 and (char == "," or char in _WHITE):
            return at
        at += 1
    return at


def _members(text: str) -> tuple[list[tuple[str, int, int]], int]:
    """([(key, value start, value end)], index of the closing brace) of the top object."""
    at = _skip_white(text, 0) + 1  # past "{"
    members: list[tuple[str, int, int]] = []
    while True:
        at = _skip_white(text, at)
        if text[at] == "}":
            return members, at
        if text[at] == ",":
            at = _skip_white(text, at + 1)
        key, at = _string_end(text, at)
        at = _skip_white(text, _skip_white(text, at) + 1)  # past ":"
        end = _value_end(text, at)
        members.append((key, at, end))
        at = end


def _encoded(value: Any) -> str:
    lines = orjson.dumps(value, option=orjson.OPT_INDENT_2).decode("utf-8").split("\n")
    return "\n".join([lines[0], *("  " + line for line in lines[1:])])


def set_keys(text: str, values: Mapping[str, Any], path: Path) -> str:
    """`text` (a JSON object) with `values` set in place or added at the end, every other
    byte kept. Raises `DataFileError` for invalid JSON, no object, or too deep a nesting."""
    try:
        parsed = json.loads(text)
    except RecursionError:
        raise DataFileError(
            "the final report is nested deeper than okstra reads: nothing was written", path=path
        ) from None
    except ValueError as exc:
        raise DataFileError(f"invalid JSON: {exc}: expected a final report", path=path) from None
    if not isinstance(parsed, dict):
        raise DataFileError(
            f"expected a JSON object (final report), got {json_kind(parsed)}", path=path
        )
    members, close = _members(text)
    pieces: list[str] = []
    done = 0
    for key, start, end in members:
        if key in values:
            pieces += [text[done:start], _encoded(values[key])]
            done = end
    present = {key for key, _, _ in members}
    added = [k for k in values if k not in present]
    if not added:
        return "".join([*pieces, text[done:]])
    last = members[-1][2] if members else close
    new = ",\n" if members else "\n"
    new += ",\n".join(f"  {orjson.dumps(k).decode()}: {_encoded(values[k])}" for k in added)
    tail = text[last:close].rstrip(_WHITE) if members else ""
    return "".join([*pieces, text[done:last], tail, new, "\n", text[close:]])
