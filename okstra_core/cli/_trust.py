"""`okstra trust [DIR]`, `--list`, `--revoke [DIR]`: the projects whose agent settings run.

A thin adapter over `okstra_core.trust`. DIR defaults to the current project (the
nearest directory holding `.okstra`, else the git top level, else the current
directory), as every command finds it.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from ..display import inert


def register(sub: Any) -> None:
    """Add `trust` to the top-level parser."""
    parser = sub.add_parser(
        "trust",
        help="trust a project: its agent settings run when okstra starts an agent there",
        description="okstra launches a lead or starts a worker only in a project you trust: "
        "the agent CLIs run the project's own settings (hooks, MCP servers). The record is "
        "yours (okstra's data directory), one entry per project (its real path and owner).",
        epilog="examples:\n  okstra trust\n  okstra trust ~/src/app\n  okstra trust --list\n"
        "  okstra trust --revoke ~/src/app",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("dir", nargs="?", help="the project (default: the current project)")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--list", action="store_true", help="list the trusted projects")
    what.add_argument("--revoke", action="store_true", help="stop trusting the project")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.set_defaults(handler=_trust, human=_human)


def _project(ns: argparse.Namespace) -> Path:
    from ..discovery import default_project_root

    if ns.dir:
        return Path(ns.dir).expanduser().absolute()
    return default_project_root(Path.cwd(), os.environ)


def _trust(ns: argparse.Namespace) -> tuple[dict[str, Any], int]:
    from .. import trust
    from ..errors import UsageError
    from ..records import to_data

    if ns.list:
        if ns.dir:
            raise UsageError("okstra trust --list takes no DIR", field="--list")
        entries = trust.trusted_projects()
        return {"ok": True, "projects": [to_data(e) for e in entries]}, 0
    project = _project(ns)
    if ns.revoke:
        removed = trust.revoke_project(project)
        real = os.path.realpath(project)
        return {"ok": True, "action": "revoked", "project": real, "changed": removed}, 0
    entry = trust.trust_project(project)
    return {"ok": True, "action": "trusted", "project": entry.path, "changed": True}, 0


def _human(payload: dict[str, Any]) -> None:
    if "projects" in payload:
        projects = payload["projects"]
        if not projects:
            lines = ["no project is trusted yet (okstra trust DIR)"]
        else:
            lines = [
                f"{inert(p['path'])}  (uid {p['ownerUid']}, {inert(p['trustedAt'])})"
                for p in projects
            ]
    elif payload["action"] == "revoked":
        state = "no longer trusted" if payload["changed"] else "was not trusted"
        lines = [f"{inert(payload['project'])}: {state}"]
    else:
        lines = [
            f"{inert(payload['project'])}: trusted (its agent settings run when okstra "
            "starts an agent there; okstra trust --revoke to undo)"
        ]
    sys.stdout.write("\n".join(lines) + "\n")
    sys.stdout.flush()
