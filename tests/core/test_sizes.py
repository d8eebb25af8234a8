"""Rooms stay small enough to read: no module over 600 lines, no function over 80.

A module or function past these sizes is asking to be split along a concept (CONTRIBUTING
says how the house is laid out). ruff caps complexity (C901, PLR0912, PLR0915); this test
caps length, which ruff does not measure.
"""

from __future__ import annotations

import ast
from pathlib import Path

import okstra_core
import okstra_demo
import okstra_tui

MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80
ROOTS = (
    Path(okstra_core.__file__).parent,
    Path(okstra_tui.__file__).parent,
    Path(okstra_demo.__file__).parent,
)


def _sources() -> list[Path]:
    return sorted(p for root in ROOTS for p in root.rglob("*.py") if "_data" not in p.parts)


def long_modules(sources: dict[str, str]) -> dict[str, int]:
    """Module name → line count, for every module over the cap."""
    counts = {name: text.count("\n") for name, text in sources.items()}
    return {name: n for name, n in counts.items() if n > MAX_MODULE_LINES}


def long_functions(sources: dict[str, str]) -> dict[str, int]:
    """`module:line name` → line count, for every function over the cap."""
    long: dict[str, int] = {}
    for name, text in sources.items():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long[f"{name}:{node.lineno} {node.name}"] = lines
    return long


def _read() -> dict[str, str]:
    return {str(p): p.read_text(encoding="utf-8") for p in _sources()}


def test_no_module_over_the_cap() -> None:
    big = long_modules(_read())
    assert not big, f"modules over {MAX_MODULE_LINES} lines (split them by concept): {big}"


def test_no_function_over_the_cap() -> None:
    long = long_functions(_read())
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"


def test_the_size_check_finds_a_long_function() -> None:
    def function(name: str, lines: int, indent: str = "") -> str:
        """`def` and its body: `lines` lines in all."""
        body = "".join(f"{indent}    x{i} = {i}\n" for i in range(lines - 1))
        return f"{indent}def {name}():\n{body}"

    # Exactly at the cap passes; one line more is found, a method too.
    assert long_functions({"m": function("f", MAX_FUNCTION_LINES)}) == {}
    method = "class C:\n" + function("g", MAX_FUNCTION_LINES + 1, indent="    ")
    assert long_functions({"m": method}) == {"m:2 g": MAX_FUNCTION_LINES + 1}


def test_the_size_check_finds_a_long_module() -> None:
    assert long_modules({"m": "x = 1\n" * MAX_MODULE_LINES}) == {}
    assert long_modules({"m": "x = 1\n" * (MAX_MODULE_LINES + 1)}) == {"m": MAX_MODULE_LINES + 1}
