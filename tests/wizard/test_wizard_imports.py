"""The wizard's modules import each other without a cycle, and never at call time."""

from __future__ import annotations

import ast
from pathlib import Path

import okstra_core.wizard

PACKAGE = Path(okstra_core.wizard.__file__).parent


def _imports(tree: ast.AST, names: set[str]) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1:
                out.update(
                    {node.module.split(".")[0]} if node.module else {a.name for a in node.names}
                )
            elif node.module and node.module.startswith("okstra_core.wizard."):
                out.add(node.module.split(".")[2])
    return out & names


# The modules loaded on first use: the outcome holds the typed run request (pydantic
# models), which asking the next question never needs (a headless step stays free of
# pydantic). Only these functions may import it, and nothing else at call time.
LAZY = {("session", "_outcomes"): {"outcome"}}


def test_no_import_cycle_and_no_call_time_imports_inside_the_wizard() -> None:
    files = {p.stem: p for p in PACKAGE.glob("*.py")}
    names = set(files)
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        graph[name] = _imports(tree, names)
        for func in ast.walk(tree):
            if isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
                inner = _imports(func, names)
                allowed = LAZY.get((name, func.name), set())
                assert inner <= allowed, f"{name}.{func.name} imports {inner} at call time"

    def visit(node: str, path: tuple[str, ...]) -> None:
        assert node not in path, f"import cycle: {' -> '.join((*path, node))}"
        for dep in graph[node]:
            visit(dep, (*path, node))

    for name in graph:
        visit(name, ())
