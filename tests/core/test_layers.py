"""The layers of okstra_core are a checked contract (docs/internals.md, "Layers").

Top to bottom; a module may import only from its own layer or below:

    front ends (okstra_tui)
    cli, frontend
    prepare, launch, life (lead, runs, resume, report, doctor)
    wizard: the package, its files (list, delete) and session (Wizard, state files)
    compat (the earlier okstra's state files and prepare flags)
    wizard: the step loop, the steps and the state
    resolver, pool, defaults, binding, roleargs, plans, config
    catalog, tasks, request, documents, setup_runs
    store, paths, errors, environment, records, lazy, display, vocabulary, derived, names,
    discovery

A module belongs to the layer of its most specific entry (`okstra_core.wizard.state`
before `okstra_core.wizard`). Every import counts: module level, inside functions (an
import deferred into a function still couples the two modules) and under
`if TYPE_CHECKING:` (a type-only import couples them too). Besides the order: prepare
and launch never import the wizard, and there is no import cycle inside the core.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import okstra_core

ROOT = Path(okstra_core.__file__).parent

LAYERS: tuple[tuple[str, ...], ...] = (
    (
        "okstra_core.errors",
        "okstra_core.paths",
        "okstra_core.environment",
        "okstra_core.store",
        "okstra_core.records",
        "okstra_core.lazy",
        "okstra_core.display",
        "okstra_core.vocabulary",
        "okstra_core.derived",
        "okstra_core.names",
        "okstra_core.discovery",
        "okstra_core.processes",
    ),
    (
        "okstra_core.catalog",
        "okstra_core.readiness",
        "okstra_core.tasks",
        "okstra_core.request",
        "okstra_core.documents",
        "okstra_core.setup_runs",
    ),
    (
        "okstra_core.resolver",
        "okstra_core.pool",
        "okstra_core.defaults",
        "okstra_core.binding",
        "okstra_core.plans",
        "okstra_core.config",
    ),
    ("okstra_core.wizard",),
    ("okstra_core.compat",),
    ("okstra_core.session",),
    (
        "okstra_core.prepare",
        "okstra_core.launch",
        "okstra_core.life",
    ),
    ("okstra_core.cli", "okstra_core.frontend"),
)
NEVER = (
    ("okstra_core.prepare", "okstra_core.wizard"),
    ("okstra_core.launch", "okstra_core.wizard"),
    ("okstra_core.documents", "okstra_core.prepare"),
    ("okstra_core.request", "okstra_core.catalog"),
)


def _modules() -> dict[str, tuple[Path, bool]]:
    found: dict[str, tuple[Path, bool]] = {}
    for path in ROOT.rglob("*.py"):
        parts = ["okstra_core", *path.relative_to(ROOT).with_suffix("").parts]
        package = parts[-1] == "__init__"
        if package:
            parts.pop()
        found[".".join(parts)] = (path, package)
    return found


def _targets(module: str, package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = module.split(".") if package else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join([*base, *([node.module] if node.module else [])])
    else:
        target = node.module or ""
    return [target, *(f"{target}.{alias.name}" for alias in node.names)]


def _imports(name: str, package: bool, tree: ast.AST, known: Iterable[str]) -> set[str]:
    """The known modules `name` imports anywhere in `tree` (type-only imports too)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Import | ast.ImportFrom):
            continue
        for target in _targets(name, package, node):
            ancestor = name.startswith(target + ".")
            if target in known and target != name and not ancestor:
                found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    """module → the okstra_core modules it imports (ancestor packages left out)."""
    modules = _modules()
    return {
        name: _imports(name, package, ast.parse(path.read_text(encoding="utf-8")), modules)
        for name, (path, package) in modules.items()
    }


def layer_of(module: str) -> int | None:
    """The layer of the most specific entry `module` is, or is inside; None if none."""
    best: tuple[int, int] | None = None  # (entry length, layer)
    for index, layer in enumerate(LAYERS):
        for top in layer:
            if _within(module, top) and (best is None or len(top) > best[0]):
                best = (len(top), index)
    return None if best is None else best[1]


def _within(module: str, top: str) -> bool:
    return module == top or module.startswith(top + ".")


def test_every_module_has_a_layer() -> None:
    unplaced = [m for m in import_graph() if m != "okstra_core" and layer_of(m) is None]
    assert not unplaced, f"place these modules in a layer (tests/core/test_layers.py): {unplaced}"


def test_imports_only_go_down() -> None:
    upward = []
    for source, targets in import_graph().items():
        low = layer_of(source)
        for target in targets:
            high = layer_of(target)
            if low is not None and high is not None and high > low:
                upward.append(f"{source} -> {target}")
            for a, b in NEVER:
                if _within(source, a) and _within(target, b):
                    upward.append(f"{source} -> {target} (never: {a} -> {b})")
    assert not upward, "imports against the layer order:\n" + "\n".join(sorted(upward))


def _cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    counter = [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycles() -> None:
    cycles = _cycles(import_graph())
    assert not cycles, f"import cycles inside okstra_core: {cycles}"


def test_type_only_and_deferred_imports_count() -> None:
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from .pool import PoolModel\n"
        "def f():\n"
        "    from .catalog import models\n"
    )
    known = {"okstra_core.pool", "okstra_core.catalog", "okstra_core.catalog.models"}
    found = _imports("okstra_core.binding", False, tree, known)
    assert found == known


def test_a_module_takes_the_layer_of_its_most_specific_entry() -> None:
    assert layer_of("okstra_core.wizard.state") == layer_of("okstra_core.wizard.engine")
    assert layer_of("okstra_core.session.wizard") == layer_of("okstra_core.session")
    session, compat = layer_of("okstra_core.session.wizard"), layer_of("okstra_core.compat")
    state = layer_of("okstra_core.wizard.state")
    assert session is not None and compat is not None and state is not None
    assert session > compat > state


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]


CHECK = r"""
import json, sys
import okstra_core.prepare, okstra_core.prepare.pipeline, okstra_core.life.report
import okstra_core.documents, okstra_core.request, okstra_core.cli.roleargs
print(json.dumps(sorted(m for m in sys.modules if m.startswith(("okstra_core.wizard", "jinja2")))))
"""


def test_prepare_loads_no_wizard_module(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHECK],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert json.loads(done.stdout) == []
