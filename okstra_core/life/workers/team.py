"""The team of a run as its manifest records it, and naming one of its members.

A member is named by its role execution ref, its label or `<role>#<n>` (`analyser#1`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ...catalog import LEADER
from ...documents.run import Participant, RoleExecution, RunManifest
from ...errors import UsageError
from ...records import Delegate, config, dataclass

WHO_ARG = "<who>"
_SHORT = re.compile(r"^(?P<role>[a-z][a-z0-9-]*)#(?P<n>\d{1,6})$")


@dataclass(frozen=True)
class Member:
    """One role execution of the run with its participant, as the manifest records them."""

    execution: RoleExecution
    participant: Participant

    ref = Delegate[str]("execution.role_execution_ref")
    participant_ref = Delegate[str]("execution.participant_ref")
    role = Delegate[str]("execution.role")
    ordinal = Delegate[int]("execution.ordinal")
    label = Delegate[str]("execution.execution_label")
    provider = Delegate[str]("execution.provider")
    model_ref = Delegate[str | None]("execution.model_ref")
    status = Delegate[str]("participant.status")

    @property
    def leader(self) -> bool:
        return self.role == LEADER

    @property
    def short(self) -> str:
        """`analyser#1`."""
        return f"{self.role}#{self.ordinal}"


@dataclass(frozen=True, kw_only=True)
class WorkerAnswer:
    """Base of a command's JSON answer about one worker (`ok`, its ref and label)."""

    __pydantic_config__ = config(camel_case=True)

    ok: bool = True
    role_execution_ref: str
    label: str


def members(manifest: RunManifest) -> list[Member]:
    """Every role execution that has a participant, with it, in manifest order."""
    by_ref = {p.participant_ref: p for p in manifest.participants}
    return [
        Member(execution, by_ref[execution.participant_ref])
        for execution in manifest.role_executions
        if execution.participant_ref in by_ref
    ]


def find(team: Sequence[Member], who: str) -> Member:
    """The worker `who` names (ref, label or `<role>#<n>`); UsageError if none or the lead."""
    short = _SHORT.fullmatch(who.strip())
    for member in team:
        if who in (member.ref, member.label) or (
            short is not None and member.role == short["role"] and member.ordinal == int(short["n"])
        ):
            if member.leader:
                raise UsageError(
                    f"{who} is the lead of the run, not a worker: the lead is started by "
                    "prepare or resume (`okstra resume`), and stopped by `okstra stop`",
                    field=WHO_ARG,
                )
            return member
    workers = ", ".join(m.short for m in team if not m.leader) or "none"
    raise UsageError(
        f"no worker {who!r} in this run: expected a role execution ref, its label or "
        f"<role>#<n> (its workers: {workers})",
        field=WHO_ARG,
    )
