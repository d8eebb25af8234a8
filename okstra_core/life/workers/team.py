"""The team of a run as its manifest records it, and naming one of its members.

A member is named by its role execution ref (`role-exec-analyser-001`), its execution
label (`analyser#1 · codex/gpt-5.6-sol`) or `<role>#<n>` (`analyser#1`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ...catalog import LEADER
from ...errors import UsageError
from ...records import dataclass

WHO_ARG = "<who>"
_SHORT = re.compile(r"^(?P<role>[a-z][a-z0-9-]*)#(?P<n>\d{1,6})$")


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class Member:
    """One role execution of the run with its participant (as recorded, unchecked)."""

    ref: str
    participant_ref: str
    role: str
    ordinal: int
    label: str
    provider: str
    model_ref: str | None
    model_id: str | None
    execution: Mapping[str, Any]
    participant: Mapping[str, Any]

    @property
    def leader(self) -> bool:
        return self.role == LEADER

    @property
    def short(self) -> str:
        """`analyser#1`."""
        return f"{self.role}#{self.ordinal}"

    @property
    def status(self) -> str:
        return _str(self.participant.get("status")) or "prepared"

    def get_str(self, key: str) -> str | None:
        return _str(self.participant.get(key))

    def get_int(self, key: str) -> int | None:
        return _int(self.participant.get(key))


def _items(manifest: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    value = manifest.get(key)
    if not isinstance(value, list):
        nested = manifest.get("executionManifest")
        value = nested.get(key) if isinstance(nested, Mapping) else None
    return [item for item in value or () if isinstance(item, Mapping)]


def members(manifest: Mapping[str, Any]) -> list[Member]:
    """Every role execution that names a participant, in manifest order."""
    by_ref = {
        p["participantRef"]: p
        for p in _items(manifest, "participants")
        if isinstance(p.get("participantRef"), str)
    }
    found: list[Member] = []
    for item in _items(manifest, "roleExecutions"):
        ref, pref = _str(item.get("roleExecutionRef")), _str(item.get("participantRef"))
        role, ordinal = _str(item.get("role")), _int(item.get("ordinal"))
        if ref is None or pref is None or role is None or ordinal is None:
            continue
        found.append(
            Member(
                ref=ref,
                participant_ref=pref,
                role=role,
                ordinal=ordinal,
                label=_str(item.get("executionLabel")) or f"{role}#{ordinal}",
                provider=_str(item.get("provider")) or "",
                model_ref=_str(item.get("modelRef")),
                model_id=_str(item.get("modelId")),
                execution=item,
                participant=by_ref.get(pref, {}),
            )
        )
    return found


def find(team: Sequence[Member], who: str) -> Member:
    """The member `who` names (ref, label or `<role>#<n>`).

    Raises:
        UsageError: no member of that name, or the lead (not a worker).
    """
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
