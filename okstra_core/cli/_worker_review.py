"""`okstra worker diff|merge|discard`: review a writer's branch, merge it, throw it away.

Registered by `_worker.register`; each calls one function of `okstra_core.life.actions`.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from ..errors import UsageError

WHO_HELP = "a writer: a role execution ref, its label, or <role>#<n> (e.g. implementer#1)"


def register(wsub: Any, sub: Any) -> None:
    """Add `diff`, `merge` and `discard` to `okstra worker` (`sub` makes a parser)."""
    diff = sub(
        wsub,
        "diff",
        "a writer's changes against its base (committed and uncommitted)",
        "  okstra worker diff implementation-001 implementer#1 --stat",
    )
    diff.add_argument("who", help=WHO_HELP)
    diff.add_argument("--stat", action="store_true", help="a summary of the files changed")
    diff.add_argument("--json", action="store_true", help="print one JSON document")
    diff.set_defaults(handler=_diff, human=_diff_human)

    merge = sub(
        wsub,
        "merge",
        "merge an ended writer's branch into the branch checked out in the project",
        "  okstra worker merge implementation-001 implementer#1\n"
        "  okstra worker merge implementation-001 fixer#1 --squash",
    )
    merge.add_argument("who", help=WHO_HELP)
    merge.add_argument("--squash", action="store_true", help="one commit on the project's branch")
    merge.add_argument("--json", action="store_true", help="print one JSON document")
    merge.set_defaults(handler=_merge, human=_merge_human)

    discard = sub(
        wsub,
        "discard",
        "remove an ended writer's worktree and delete its branch (asks first)",
        "  okstra worker discard implementation-001 implementer#1 --yes",
    )
    discard.add_argument("who", help=WHO_HELP)
    discard.add_argument(
        "--yes", action="store_true", help="do not ask (needed without a terminal)"
    )
    discard.add_argument("--json", action="store_true", help="print one JSON document")
    discard.set_defaults(handler=_discard, human=_discard_human)


def _run_dir(value: str) -> Path:
    from ..life.locate import locate_run

    return locate_run(value, Path.cwd(), os.environ)


def _print(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def _diff(ns: argparse.Namespace) -> tuple[dict[str, Any], int]:
    from ..environment import Environment
    from ..life.actions import worker_diff
    from ..records import to_data

    found = worker_diff(_run_dir(ns.run), Environment.real(), ns.who, stat=ns.stat)
    return to_data(found), 0


def _diff_human(payload: dict[str, Any]) -> None:
    from ..display import inert

    text: str = payload["text"]
    if sys.stdout.isatty():
        text = inert(text, keep_newlines=True)
    _print(text or f"okstra: {inert(payload['label'])} changed nothing\n")


def _merge(ns: argparse.Namespace) -> tuple[dict[str, Any], int]:
    from ..environment import Environment
    from ..life.actions import worker_merge
    from ..records import to_data

    done = worker_merge(_run_dir(ns.run), Environment.real(), ns.who, squash=ns.squash)
    return to_data(done), 0


def _merge_human(payload: dict[str, Any]) -> None:
    from ..display import inert

    how = "squashed into" if payload["squash"] else "merged into"
    files = len(payload["files"])
    _print(
        inert(
            f"okstra: {payload['label']} ({payload['branch']}) {how} {payload['into']} — "
            f"{files} file{'s' if files != 1 else ''}, now at {payload['commit'][:12]}"
        )
        + "\n"
    )


def _confirm(question: str) -> bool:
    print(question + " [y/N] ", end="", file=sys.stderr, flush=True)
    answer = sys.stdin.readline().strip().lower()
    return answer in ("y", "yes")


def _discard(ns: argparse.Namespace) -> tuple[dict[str, Any], int]:
    from ..environment import Environment
    from ..life.actions import worker_discard
    from ..records import to_data

    run_dir = _run_dir(ns.run)
    if not ns.yes:
        if not sys.stdin.isatty():
            raise UsageError(
                "discarding throws the writer's work away: pass --yes (no terminal to ask)",
                field="--yes",
            )
        if not _confirm(f"okstra: remove {ns.who}'s worktree and delete its branch?"):
            return {"ok": False, "discarded": False, "error": "not confirmed"}, 1
    done = worker_discard(run_dir, Environment.real(), ns.who)
    return to_data(done), 0


def _discard_human(payload: dict[str, Any]) -> None:
    from ..display import inert

    if not payload.get("ok"):
        _print("okstra: nothing was discarded\n")
        return
    steps = "; ".join(payload["steps"]) or "nothing was left to remove"
    _print(inert(f"okstra: {payload['label']}: {steps}") + "\n")
