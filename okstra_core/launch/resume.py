"""The resume sheet: `resume.json` and `resume-lead.sh` of a run (SPEC §8 step 6).

For each launched participant: its CLI, session id, working directory and the exact
resume argv. A session id is only ever paired with the CLI that minted it: an entry is
built from that CLI's own launch plan, and the sheet refuses an id that appears under
two CLIs. A `discover` provider's id is unknown until found: the sheet says
"pending discovery" and the script refuses to guess.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from okstra_core import store
from okstra_core.catalog.models import LEADER, SessionIdKind
from okstra_core.errors import OkstraError
from okstra_core.launch.plan import LaunchPlan

RESUME_JSON = "resume.json"
RESUME_SCRIPT = "resume-lead.sh"
SCHEMA_VERSION = 1
PENDING = "pending discovery"


@dataclass(frozen=True)
class ResumeEntry:
    """How to get back into one participant's CLI session."""

    participant: str
    role: str
    provider_id: str
    cli: str
    model: str
    cwd: Path
    session_id: str | None
    session_id_kind: SessionIdKind
    resume_argv: tuple[str, ...] | None
    env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def pending_discovery(self) -> bool:
        return self.session_id is None

    @classmethod
    def from_plan(
        cls,
        plan: LaunchPlan,
        participant: str,
        role: str = LEADER,
        *,
        session_id: str | None = None,
        cwd: Path | None = None,
    ) -> ResumeEntry:
        """The entry of a participant launched with `plan`.

        Args:
            plan: the participant's launch plan (its CLI minted or will mint the id).
            participant: e.g. `participant-001`.
            role: the participant's role.
            session_id: a discovered id (discover providers); minted ids come from the plan.
            cwd: where to resume; default the plan's project root.

        Raises:
            OkstraError: `session_id` differs from the id okstra minted for this CLI.
        """
        if session_id is not None and plan.session_id is not None and session_id != plan.session_id:
            raise OkstraError(
                f"session id {session_id} was not minted for this {plan.cli} launch "
                f"(okstra gave it {plan.session_id})",
                field=participant,
            )
        sid = plan.session_id or session_id
        return cls(
            participant=participant,
            role=role,
            provider_id=plan.provider_id,
            cli=plan.cli,
            model=plan.model,
            cwd=cwd or plan.project_root,
            session_id=sid,
            session_id_kind=plan.session_id_kind,
            resume_argv=plan.resume_argv(sid),
            env=plan.env,
        )

    def command(self) -> str | None:
        """The resume command as one shell line (for people), or None while pending."""
        if self.resume_argv is None:
            return None
        exports = [f"{k}={shlex.quote(v)}" for k, v in self.env.items()]
        return f"cd {shlex.quote(str(self.cwd))} && " + " ".join(
            [*exports, shlex.join(self.resume_argv)]
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "participant": self.participant,
            "role": self.role,
            "provider": self.provider_id,
            "cli": self.cli,
            "model": self.model,
            "cwd": str(self.cwd),
            "sessionId": self.session_id,
            "sessionIdKind": self.session_id_kind,
            "status": PENDING if self.pending_discovery else "ready",
            "resumeArgv": list(self.resume_argv) if self.resume_argv is not None else None,
            "resumeCommand": self.command(),
            "env": dict(self.env),
        }


def _check(entries: Sequence[ResumeEntry]) -> None:
    owner: dict[str, ResumeEntry] = {}
    for entry in entries:
        if entry.session_id is None:
            continue
        if entry.resume_argv is None or not any(
            entry.session_id in arg for arg in entry.resume_argv
        ):
            raise OkstraError(
                f"the resume argv of {entry.participant} does not carry its session id",
                field=entry.participant,
            )
        first = owner.setdefault(entry.session_id, entry)
        if first is not entry and first.cli != entry.cli:
            raise OkstraError(
                f"session id {entry.session_id} of {first.cli} ({first.participant}) is "
                f"also listed for {entry.cli} ({entry.participant}); a session id only "
                "goes back to the CLI that minted it",
                field=entry.participant,
            )


def _comment(text: str) -> str:
    # A value with a line break must not escape the comment into a command.
    return "# " + " ".join(text.splitlines())


def _pending_message(lead: ResumeEntry) -> str:
    return (
        f"okstra: the {lead.cli} session id of this run is {PENDING}; "
        f"resume it with the CLI's own session picker, started in {lead.cwd}"
    )


def _script(entries: Sequence[ResumeEntry]) -> str:
    lead = next((e for e in entries if e.role == LEADER), None)
    lines = ["#!/bin/sh", "# Resume this run's lead CLI session (written by okstra)."]
    if lead is None:
        lines += [
            "echo 'okstra: no lead CLI was launched for this run (the host session is the "
            "lead).' >&2",
            "exit 1",
        ]
    elif lead.resume_argv is None:
        lines += [
            _comment(
                f"{lead.participant}: {lead.cli} minted its own session id; "
                "okstra has not found it yet."
            ),
            f"echo {shlex.quote(_pending_message(lead))} >&2",
            "exit 1",
        ]
    else:
        lines += [
            _comment(
                f"{lead.participant} · {lead.provider_id} · {lead.model} · "
                f"session {lead.session_id}"
            ),
            "set -e",
            f"cd {shlex.quote(str(lead.cwd))}",
        ]
        lines += [f"export {k}={shlex.quote(v)}" for k, v in lead.env.items()]
        lines.append(f"exec {shlex.join(lead.resume_argv)}")
    return "\n".join(lines) + "\n"


def render_resume_sheet(entries: Sequence[ResumeEntry]) -> tuple[bytes, str]:
    """The contents of `resume.json` and `resume-lead.sh` (for dry runs and digests).

    Raises:
        OkstraError: one session id listed under two CLIs, or an id missing from its argv.
    """
    _check(entries)
    data = {
        "schemaVersion": SCHEMA_VERSION,
        "participants": [entry.to_json() for entry in entries],
    }
    return store.dumps_json(data), _script(entries)


def write_resume_sheet(run_dir: Path, entries: Sequence[ResumeEntry]) -> tuple[Path, Path]:
    """Write `resume.json` (0600) and `resume-lead.sh` (0700) atomically into `run_dir`.

    Call it again once a pending session id is discovered; both files are replaced.

    Returns:
        The two paths.
    """
    data, script = render_resume_sheet(entries)
    json_path = run_dir / RESUME_JSON
    script_path = run_dir / RESUME_SCRIPT
    store.atomic_write_bytes(json_path, data, mode=0o600)
    store.atomic_write_text(script_path, script, mode=0o700)
    return json_path, script_path
