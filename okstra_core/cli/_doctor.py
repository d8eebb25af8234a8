"""`okstra doctor [--json]`: each provider's CLI (found, version, launch flags) and tmux."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import add_command, json_flag, say

if TYPE_CHECKING:
    import argparse

    from ..life.doctor import DoctorReply


def register(sub: Any) -> None:
    """Add `doctor` to the top-level parser."""
    parser = add_command(
        sub, "doctor", "check the agent CLIs and tmux; say how to install what is missing",
        "okstra doctor", "okstra doctor --json",
    )  # fmt: skip
    json_flag(parser, _doctor, _human)


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
    from ..life.doctor import render

    say(render(reply))
