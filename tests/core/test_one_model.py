"""One model of the run: camelCase keys are spelled by the documents, nowhere else.

The run manifest, the runs index and every other file okstra writes are typed records
(`okstra_core.documents`) whose names in files are declared once, as aliases. Code that
spells `"roleExecutionRef"` as a dict key, a subscript or a `.get`/`.pop`/`.setdefault`
argument edits the file beside its record; this test counts such spellings across the
package, outside `okstra_core/documents/`, and caps them.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import okstra
import okstra_core
import okstra_tui

# What the package still spells by hand (the protocol's and other shared files' own
# keys that no record declares yet); lower it as they move into records.
MAX_CAMEL_KEYS = 17
ROOTS = tuple(Path(m.__file__).parent for m in (okstra, okstra_core, okstra_tui))
DOCUMENTS = Path(okstra_core.__file__).parent / "documents"
_CAMEL = re.compile(r"^[a-z]+(?:[A-Z][a-z0-9]*)+$")
_KEY_METHODS = frozenset({"get", "pop", "setdefault"})


def _camel(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and _CAMEL.match(node.value):
        return node.value
    return None


def _keys(node: ast.AST) -> Iterator[ast.AST | None]:
    """The expressions `node` uses as a key: dict keys, subscripts, `.get(k)` and kin."""
    if isinstance(node, ast.Dict):
        yield from node.keys
    elif isinstance(node, ast.Subscript):
        yield node.slice
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _KEY_METHODS
        and node.args
    ):
        yield node.args[0]


def camel_keys(source: str) -> list[tuple[int, str]]:
    """(line, key) of every camelCase string literal `source` uses as a key."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        for key in _keys(node):
            name = _camel(key)
            if name is not None and key is not None:
                found.append((getattr(key, "lineno", 0), name))
    return found


def _sources() -> list[Path]:
    return sorted(
        p
        for root in ROOTS
        for p in root.rglob("*.py")
        if "_data" not in p.parts and DOCUMENTS not in p.parents
    )


def test_camel_case_keys_stay_in_the_documents() -> None:
    spelled: dict[str, list[str]] = {}
    for path in _sources():
        keys = camel_keys(path.read_text(encoding="utf-8"))
        if keys:
            spelled[str(path)] = [f"{line}:{key}" for line, key in keys]
    total = sum(len(v) for v in spelled.values())
    assert total <= MAX_CAMEL_KEYS, (
        f"{total} camelCase keys spelled outside okstra_core/documents (at most "
        f"{MAX_CAMEL_KEYS}): use the documents' records: {spelled}"
    )


def test_the_counter_finds_each_kind_of_key() -> None:
    planted = (
        "d = {'roleExecutionRef': 1, 'plain': 2}\n"
        "d['participantRef']\n"
        "d.get('exitStatus')\n"
        "d.pop('paneRef', None)\n"
        "d.setdefault('runId', 'x')\n"
        "d['snake_key']; d.get('status'); print('notAKeyHere')\n"
    )
    assert camel_keys(planted) == [
        (1, "roleExecutionRef"),
        (2, "participantRef"),
        (3, "exitStatus"),
        (4, "paneRef"),
        (5, "runId"),
    ]


def test_the_counter_sees_the_package() -> None:
    # The walk reaches the modules that once spelled the most keys.
    names = {p.name for p in _sources()}
    assert {"plan.py", "record.py", "foreground.py", "lead.py", "_runs.py"} <= names
    assert not any(DOCUMENTS in p.parents for p in _sources())
