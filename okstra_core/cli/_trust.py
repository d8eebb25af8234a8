"""`okstra trust [DIR]`, `--list`, `--revoke [DIR]` (over `okstra_core.trust`; DIR defaults
to the current project), and `okstra doctor`: each provider's CLI (found, version, launch
flags), tmux and the project's trust.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..discovery import default_project_root
from ..display import inert
from ..records import config, dataclass
from . import add_arguments, add_command, json_flag, say

if TYPE_CHECKING:
    import argparse

    from ..life.doctor import DoctorReply
    from ..trust import TrustEntry


def register(sub: Any) -> None:
    """Add `doctor` and `trust` to the top-level parser."""
    doctor = add_command(
        sub, "doctor", "check the agent CLIs and tmux; say how to install what is missing",
        "okstra doctor", "okstra doctor --json",
    )  # fmt: skip
    json_flag(doctor, _doctor, _doctor_human)
    parser = add_command(
        sub, "trust", "trust a project: its agent settings run when okstra starts an agent there",
        "okstra trust",
        "okstra trust ~/src/app",
        "okstra trust --list",
        "okstra trust --revoke ~/src/app",
        description="okstra launches a lead or starts a worker only in a project you trust: "
        "the agent CLIs run the project's own settings (hooks, MCP servers). The record is "
        "yours (okstra's data directory), one entry per project (its real path and owner).",
        args=(("dir", dict(nargs="?", help="the project (default: the current project)")),),
    )  # fmt: skip
    add_arguments(parser.add_mutually_exclusive_group(), (
        ("--list", dict(action="store_true", help="list the trusted projects")),
        ("--revoke", dict(action="store_true", help="stop trusting the project")),
    ))  # fmt: skip
    json_flag(parser, _trust, _human)


@dataclass(frozen=True, kw_only=True)
class TrustedList:
    """`okstra trust --list`: every trusted project, as the record holds it."""

    __pydantic_config__ = config(camel_case=True)

    ok: Literal[True] = True
    projects: tuple[TrustEntry, ...]


@dataclass(frozen=True, kw_only=True)
class TrustChanged:
    """`okstra trust [--revoke]`: the project (its real path) and whether that changed it."""

    __pydantic_config__ = config(camel_case=True)

    ok: Literal[True] = True
    action: Literal["trusted", "revoked"]
    project: str
    changed: bool


def _trust(ns: argparse.Namespace) -> tuple[TrustedList | TrustChanged, int]:
    from .. import trust
    from ..errors import UsageError

    if ns.list:
        if ns.dir:
            raise UsageError("okstra trust --list takes no DIR", field="--list")
        return TrustedList(projects=trust.trusted_projects()), 0
    given = Path(ns.dir).expanduser().absolute() if ns.dir else None
    project = given or default_project_root(Path.cwd(), os.environ)
    if ns.revoke:
        removed = trust.revoke_project(project)
        real = os.path.realpath(project)
        return TrustChanged(action="revoked", project=real, changed=removed), 0
    entry = trust.trust_project(project)
    return TrustChanged(action="trusted", project=entry.path, changed=True), 0


def _human(reply: TrustedList | TrustChanged) -> None:
    if isinstance(reply, TrustedList):
        if not reply.projects:
            lines = ["no project is trusted yet (okstra trust DIR)"]
        else:
            lines = [
                f"{inert(p.path)}  (uid {p.owner_uid}, {inert(p.trusted_at)})"
                for p in reply.projects
            ]
    elif reply.action == "revoked":
        state = "no longer trusted" if reply.changed else "was not trusted"
        lines = [f"{inert(reply.project)}: {state}"]
    else:
        lines = [
            f"{inert(reply.project)}: trusted (its agent settings run when okstra "
            "starts an agent there; okstra trust --revoke to undo)"
        ]
    say("\n".join(lines) + "\n")


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


def _doctor_human(reply: DoctorReply) -> None:
    from ..life.doctor import render

    say(render(reply))
