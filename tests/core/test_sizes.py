"""Rooms stay small enough to read: no module over 600 lines, no function over 80.

A module or function past these sizes is asking to be split along a concept (CONTRIBUTING
says how the house is laid out). ruff caps complexity (C901, PLR0912, PLR0915); this test
caps length, which ruff does not measure.
"""

from __future__ import annotations

import ast
from pathlib import Path

import okstra_core
import okstra_tui

MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80
ROOTS = (Path(okstra_core.__file__).parent, Path(okstra_tui.__file__).parent)


def _sources() -> list[Path]:
    return sorted(p for root in ROOTS for p in root.rglob("*.py") if "_data" not in p.parts)


def test_no_module_over_the_cap() -> None:
    big = {
        str(p): n
        for p in _sources()
        if (n := p.read_text(encoding="utf-8").count("\n")) > MAX_MODULE_LINES
    }
    assert not big, f"modules over {MAX_MODULE_LINES} lines (split them by concept): {big}"


def test_no_function_over_the_cap() -> None:
    long: dict[str, int] = {}
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long[f"{path}:{node.lineno} {node.name}"] = lines
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"


def test_the_size_check_finds_a_long_function() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    tree = ast.parse(f"def f():\n{body}\n")
    (func,) = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    assert (func.end_lineno or 0) - func.lineno + 1 > MAX_FUNCTION_LINES
