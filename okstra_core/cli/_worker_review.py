"""`okstra worker diff|merge|discard`: review a writer's branch, merge it, throw it away.

Registered by `_worker.register`; each calls one function of `okstra_core.life.actions`.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from ..display import inert
from ..environment import Environment
from ..errors import UsageError
from ..records import to_data
from . import json_flag, run_dir, say

if TYPE_CHECKING:
    import argparse

WHO_HELP = "a writer: a role execution ref, its label, or <role>#<n> (e.g. implementer#1)"


def register(wsub: Any, sub: Any) -> None:
    """Add `diff`, `merge` and `discard` to `okstra worker` (`sub` makes a parser)."""
    diff = sub(
        wsub,
        "diff",
        "a writer's changes against its base (committed and uncommitted)",
        "okstra worker diff implementation-001 implementer#1 --stat",
    )
    diff.add_argument("who", help=WHO_HELP)
    diff.add_argument("--stat", action="store_true", help="a summary of the files changed")
    json_flag(diff, _diff, _diff_human)

    merge = sub(
        wsub,
        "merge",
        "merge an ended writer's branch into the branch checked out in the project",
        "okstra worker merge implementation-001 implementer#1",
        "okstra worker merge implementation-001 fixer#1 --squash",
    )
    merge.add_argument("who", help=WHO_HELP)
    merge.add_argument("--squash", action="store_true", help="one commit on the project's branch")
    json_flag(merge, _merge, _merge_human)

    discard = sub(
        wsub,
        "discard",
        "remove an ended writer's worktree and delete its branch (asks first)",
        "okstra worker discard implementation-001 implementer#1 --yes",
    )
    discard.add_argument("who", help=WHO_HELP)
    discard.add_argument(
        "--yes", action="store_true", help="do not ask (needed without a terminal)"
    )
    json_flag(discard, _discard, _discard_human)


def _diff(ns: argparse.Namespace) -> tuple[dict[str, Any], int]:
    from ..life.actions import worker_diff

    return to_data(worker_diff(run_dir(ns.run), Environment.real(), ns.who, stat=ns.stat)), 0


def _diff_human(payload: dict[str, Any]) -> None:
    text: str = payload["text"]
    if sys.stdout.isatty():
        text = inert(text, keep_newlines=True)
    say(text or f"okstra: {inert(payload['label'])} changed nothing\n")


def _merge(ns: argparse.Namespace) -> tuple[dict[str, Any], int]:
    from ..life.actions import worker_merge

    done = worker_merge(run_dir(ns.run), Environment.real(), ns.who, squash=ns.squash)
    return to_data(done), 0


def _merge_human(payload: dict[str, Any]) -> None:
    how = "squashed into" if payload["squash"] else "merged into"
    files = len(payload["files"])
    text = (
        f"okstra: {payload['label']} ({payload['branch']}) {how} {payload['into']} — "
        f"{files} file{'s' if files != 1 else ''}, now at {payload['commit'][:12]}"
    )
    say(inert(text) + "\n")


def _discard(ns: argparse.Namespace) -> tuple[dict[str, Any], int]:
    from ..life.actions import worker_discard

    run = run_dir(ns.run)
    if not ns.yes:
        if not sys.stdin.isatty():
            raise UsageError(
                "discarding throws the writer's work away: pass --yes (no terminal to ask)",
                field="--yes",
            )
        question = f"okstra: remove {ns.who}'s worktree and delete its branch?"
        print(question + " [y/N] ", end="", file=sys.stderr, flush=True)
        if sys.stdin.readline().strip().lower() not in ("y", "yes"):
            return {"ok": False, "discarded": False, "error": "not confirmed"}, 1
    return to_data(worker_discard(run, Environment.real(), ns.who)), 0


def _discard_human(payload: dict[str, Any]) -> None:
    if not payload.get("ok"):
        say("okstra: nothing was discarded\n")
        return
    steps = "; ".join(payload["steps"]) or "nothing was left to remove"
    say(inert(f"okstra: {payload['label']}: {steps}") + "\n")
