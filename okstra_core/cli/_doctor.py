"""`okstra doctor [--json]`: each provider's CLI (found, version, launch flags) and tmux."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..life.doctor import DoctorReply


def register(sub: Any) -> None:
    """Add `doctor` to the top-level parser."""
    parser = sub.add_parser(
        "doctor",
        help="check the agent CLIs and tmux; say how to install what is missing",
        epilog="examples:\n  okstra doctor\n  okstra doctor --json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.set_defaults(handler=_doctor, human=_human)


def _doctor(ns: argparse.Namespace) -> tuple[DoctorReply, int]:
    from ..environment import Environment
    from ..life.doctor import DoctorReply, config_files, diagnose, project_trust

    environment = Environment.real()
    report = diagnose(environment)
    reply = DoctorReply(
        report=report,
        project_trust=project_trust(environment),
        config_files=config_files(environment),
    )
    return reply, 0 if report.ok else 1


def _human(reply: DoctorReply) -> None:
    import sys

    from ..life.doctor import render

    sys.stdout.write(render(reply))
    sys.stdout.flush()
