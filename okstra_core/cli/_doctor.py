"""`okstra doctor [--json]`: each provider's CLI (found, version, launch flags) and tmux."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    """Add `doctor` to the top-level parser."""
    parser = sub.add_parser(
        "doctor", help="check the agent CLIs and tmux; say how to install what is missing"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.set_defaults(handler=_doctor, human=_human)


def _doctor(ns: argparse.Namespace) -> tuple[dict[str, Any], int]:
    from ..doctor import diagnose
    from ..environment import Environment

    report = diagnose(Environment.real())
    return report.to_json(), 0 if report.ok else 1


def _human(payload: dict[str, Any]) -> str:
    lines = []
    for check in payload["checks"]:
        mark = "ok " if check["ok"] else ("-- " if check["disabled"] else "!! ")
        what = check["version"] or ""
        if check["ok"] and check["path"]:
            what = f"{what}  ({check['path']})".strip()
        if check["disabled"]:
            what = "disabled in config" + (f"; {what}" if what else "")
        lines.append(f"{mark}{check['name']:<12} {what}".rstrip())
        if not check["ok"]:
            lines.append(f"     {check['problem']}")
            if check["fix"]:
                lines.append(f"     fix: {check['fix']}")
    lines.append("")
    lines.append(payload["summary"])
    if not payload["ok"]:
        lines.append("no agent CLI that can lead a run works yet: install one of the above")
    return "\n".join(lines) + "\n"
