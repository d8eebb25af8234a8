"""Dead code in okstra's packages: what nothing refers to (vulture). Run by scripts/test.sh.

    python scripts/dead_code.py      exit 1 and one line per finding, else exit 0

vulture reads every definition and every name used, and reports a definition no name
refers to. Reported here: its functions, methods, classes and properties (60%
confidence: nothing names them), and anything it is sure of (100%: an unused argument
or local, unreachable code). Not reported: its variables and attributes below 100%,
which are the fields of records and documents, read and written by name (aliases,
JSON). What the tests and the bench use counts as used. Names reached another way —
Textual's handlers and overrides, Jinja's sandbox hooks, a record's views named in a
string — are in `dead_code_whitelist.py` beside this script, each with its reason.
"""

from __future__ import annotations

import sys
from pathlib import Path

import vulture

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("okstra", "okstra_core", "okstra_tui", "okstra_demo")
USERS = ("tests", "bench")
KINDS = frozenset({"function", "method", "class", "property"})
# Textual calls these by name: message handlers, actions, watchers, compose.
HANDLERS = ["on_*", "_on_*", "action_*", "watch_*", "compose"]
# Textual's `@on(...)` handlers are called through the decorator.
DECORATORS = ["@on"]


def findings() -> list[str]:
    finder = vulture.Vulture(ignore_names=HANDLERS, ignore_decorators=DECORATORS)
    finder.scavenge(
        [
            *(str(ROOT / p) for p in (*PACKAGES, *USERS)),
            str(Path(__file__).with_name("dead_code_whitelist.py")),
        ]
    )
    packages = tuple(ROOT / p for p in PACKAGES)
    return [
        item.get_report()
        for item in finder.get_unused_code(min_confidence=60)
        if Path(item.filename).is_relative_to(packages[0].parent)
        and any(Path(item.filename).is_relative_to(p) for p in packages)
        and (item.typ in KINDS or item.confidence >= 100)
    ]


def main() -> int:
    found = findings()
    for line in found:
        print(line)
    if found:
        print(
            f"{len(found)} unused: remove them, or name what reaches them in "
            "scripts/dead_code_whitelist.py",
            file=sys.stderr,
        )
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
