"""The resume sheet of a run: `resume.json` and `resume-lead.sh`.

A session id is only ever paired with the CLI that minted it (an entry comes from that
CLI's own launch plan; an id under two CLIs is refused). A `discover` id is "pending
discovery" until `okstra resume <run> --exec` finds it, rewrites the sheet and resumes.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from okstra_core import store
from okstra_core.catalog.argv import render_argv
from okstra_core.catalog.models import LEADER, DiscoverSpec, ProviderSpec, SessionIdKind
from okstra_core.documents.resume import ResumeDiscover, ResumeDocument, ResumeParticipant
from okstra_core.environment import Environment
from okstra_core.errors import DataFileError, OkstraError
from okstra_core.launch.mcp import McpServer
from okstra_core.launch.plan import LaunchPlan, plan_launch

from ..records import dataclass, field, fields_of

RESUME_JSON = "resume.json"
RESUME_SCRIPT = "resume-lead.sh"
PENDING: Final = "pending discovery"
# What a pending entry records of where its CLI records session ids.
_DISCOVER = "glob id_pattern cwd_field"


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
    # While pending: `resume_argv` with `{session_id}` open, and where the CLI records ids.
    resume_template: tuple[str, ...] | None = None
    discover: DiscoverSpec | None = None

    @property
    def pending_discovery(self) -> bool:
        return self.session_id is None

    def with_session(self, session_id: str) -> ResumeEntry:
        """This pending entry, finished with the id its own CLI minted (OkstraError when
        it already has another id or records no resume template)."""
        if self.session_id is not None:
            if session_id == self.session_id:
                return self
            raise OkstraError(
                f"{self.participant} already has session id {self.session_id}",
                field=self.participant,
            )
        where = f"{self.participant}.resumeArgvTemplate"
        if self.resume_template is None:
            raise OkstraError(
                "the resume sheet does not record how to resume this CLI; "
                "resume it with the CLI's own session picker",
                field=where,
            )
        argv = render_argv(
            self.resume_template, {"session_id": session_id}, {}, source=RESUME_JSON, field=where
        )
        return replace(
            self, session_id=session_id, resume_argv=argv, resume_template=None, discover=None
        )

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
        """The entry of a participant launched with `plan` (`session_id`: a discovered id;
        OkstraError when it differs from the id okstra minted; `cwd`: default the plan's
        project root)."""
        if session_id is not None and plan.session_id is not None and session_id != plan.session_id:
            raise OkstraError(
                f"session id {session_id} was not minted for this {plan.cli} launch "
                f"(okstra gave it {plan.session_id})",
                field=participant,
            )
        sid = plan.session_id or session_id
        pending = sid is None
        return cls(
            participant=participant,
            role=role,
            **fields_of(plan, "provider_id cli model session_id_kind env"),
            cwd=cwd or plan.project_root,
            session_id=sid,
            resume_argv=plan.resume_argv(sid),
            resume_template=plan.resume_argv_template() if pending else None,
            discover=plan.discover_fixed if pending else None,
        )

    @classmethod
    def from_document(cls, data: ResumeParticipant) -> ResumeEntry:
        """An entry read back from `resume.json` (already checked by its model)."""
        discover = None
        if data.discover is not None and data.session_id is None:
            seconds = float(data.discover.timeout_seconds)
            discover = DiscoverSpec(**fields_of(data.discover, _DISCOVER), timeout_seconds=seconds)
        return cls(
            **fields_of(data, "participant role cli model session_id session_id_kind"),
            provider_id=data.provider,
            cwd=Path(data.cwd),
            resume_argv=data.resume_argv if data.session_id is not None else None,
            env=MappingProxyType(dict(data.env)),
            resume_template=data.resume_argv_template if data.session_id is None else None,
            discover=discover,
        )

    def command(self) -> str | None:
        """The resume command as one shell line (for people), or None while pending."""
        if self.resume_argv is None:
            return None
        exports = [f"{k}={shlex.quote(v)}" for k, v in self.env.items()]
        return f"cd {shlex.quote(str(self.cwd))} && " + " ".join(
            [*exports, shlex.join(self.resume_argv)]
        )

    def to_document(self) -> ResumeParticipant:
        """This entry as a participant of `resume.json`."""
        return ResumeParticipant(
            **fields_of(self, "participant role cli model session_id session_id_kind resume_argv"),
            provider=self.provider_id,
            cwd=str(self.cwd),
            status=PENDING if self.pending_discovery else "ready",
            resume_command=self.command(),
            env=dict(self.env),
            resume_argv_template=self.resume_template,
            discover=(
                ResumeDiscover(**fields_of(self.discover, f"{_DISCOVER} timeout_seconds"))
                if self.discover is not None
                else None
            ),
        )


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


def _heal_lines(lead: ResumeEntry, run_dir: Path, okstra: str | None) -> list[str]:
    """Ask `okstra resume <run> --exec` to find the id, rewrite this sheet and resume
    (the okstra recorded at prepare time first, then PATH's; every value quoted)."""
    missing = (
        f"{_pending_message(lead)}; okstra (which can look the id up) was not found "
        f"at {okstra or '(not recorded)'} nor on PATH"
    )
    return [
        _comment(
            f"{lead.participant}: {lead.cli} minted its own session id; okstra has not "
            "found it yet. `okstra resume` looks it up, rewrites this sheet and resumes."
        ),
        f"okstra={shlex.quote(okstra or 'okstra')}",
        'if [ ! -x "$okstra" ]; then okstra=okstra; fi',
        'if ! command -v "$okstra" >/dev/null 2>&1; then',
        f"  echo {shlex.quote(missing)} >&2",
        "  exit 1",
        "fi",
        f'exec "$okstra" resume {shlex.quote(str(run_dir))} --exec "$@"',
    ]


def _script(
    entries: Sequence[ResumeEntry], run_dir: Path | None = None, okstra: str | None = None
) -> str:
    lead = next((e for e in entries if e.role == LEADER), None)
    lines = ["#!/bin/sh", "# Resume this run's lead CLI session (written by okstra)."]
    if lead is None:
        lines += [
            "echo 'okstra: no lead CLI was launched for this run (the host session is the "
            "lead).' >&2",
            "exit 1",
        ]
    elif lead.resume_argv is None and run_dir is not None:
        lines += _heal_lines(lead, run_dir, okstra)
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


def render_resume_sheet(
    entries: Sequence[ResumeEntry], *, run_dir: Path | None = None, okstra: str | None = None
) -> tuple[bytes, str]:
    """The contents of `resume.json` and `resume-lead.sh` (for dry runs and digests).

    With `run_dir`, a pending script runs `<okstra> resume <run_dir> --exec`. Raises
    OkstraError for one id under two CLIs, or an id missing from its argv.
    """
    _check(entries)
    document = ResumeDocument(
        participants=tuple(entry.to_document() for entry in entries), okstra=okstra
    )
    return document.to_bytes(), _script(entries, run_dir, okstra)


def write_resume_sheet(
    run_dir: Path, entries: Sequence[ResumeEntry], *, okstra: str | None = None
) -> tuple[Path, Path]:
    """Write `resume.json` (0600) and `resume-lead.sh` (0700) atomically; returns both."""
    data, script = render_resume_sheet(entries, run_dir=run_dir, okstra=okstra)
    json_path = run_dir / RESUME_JSON
    script_path = run_dir / RESUME_SCRIPT
    store.atomic_write_bytes(json_path, data, mode=0o600)
    store.atomic_write_text(script_path, script, mode=0o700)
    return json_path, script_path


@dataclass(frozen=True)
class ResumeSheet:
    """A run's resume sheet as read back from `resume.json`."""

    path: Path
    entries: tuple[ResumeEntry, ...]
    okstra: str | None

    @property
    def pending(self) -> tuple[ResumeEntry, ...]:
        return tuple(e for e in self.entries if e.pending_discovery)

    def lead(self) -> ResumeEntry | None:
        return next((e for e in self.entries if e.role == LEADER), None)


def read_resume_sheet(run_dir: Path) -> ResumeSheet:
    """Read and check `<run_dir>/resume.json`."""
    path = run_dir / RESUME_JSON
    document = ResumeDocument.read(path)
    entries = tuple(ResumeEntry.from_document(item) for item in document.participants)
    try:
        _check(entries)
    except OkstraError as exc:
        raise DataFileError(exc.message, path=path, field=exc.field) from None
    return ResumeSheet(path=path, entries=entries, okstra=document.okstra)


# What a session id may be at all: never a flag, never a path, never whitespace.
_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
_TOKEN = re.compile(r"[A-Za-z0-9]{1,128}")


def check_session_id(session_id: str, kind: SessionIdKind) -> str | None:
    """Why `session_id` cannot be a session id of `kind` (None when it can).

    `uuid4`: a canonical UUID; `token`: letters and digits; `discover`: anything the CLI
    minted but a flag, a path, spaces or control characters.
    """
    if _SESSION_ID.fullmatch(session_id) is None:
        return (
            f"session id {session_id!r} is not a session id (expected letters, digits, "
            "'.', '_', ':' or '-', starting with a letter or digit)"
        )
    if kind == "uuid4":
        try:
            canonical = str(uuid.UUID(session_id))
        except ValueError:
            canonical = ""
        if canonical != session_id.lower():
            return f"session id {session_id!r} is not a UUID (this CLI's ids are UUIDs)"
    if kind == "token" and _TOKEN.fullmatch(session_id) is None:
        return f"session id {session_id!r} is not a token of letters and digits"
    return None


@dataclass(frozen=True)
class ResumeCommand:
    """What `okstra resume --exec` runs: rebuilt by okstra, never taken from a run file."""

    argv: tuple[str, ...]
    cwd: Path
    env: Mapping[str, str]  # only the provider's extra variables (`launch.env`)


def rebuild_resume_command(
    entry: ResumeEntry,
    provider: ProviderSpec,
    *,
    project_root: Path,
    prompt_file: Path,
    kickoff: str,
    environment: Environment,
    path: Path,
    mcp: McpServer | None = None,
) -> ResumeCommand:
    """Rebuild an entry's resume command from the catalog; refuse a sheet that disagrees.

    The argv is the provider's `launch.resume` with the recorded session id (of the
    provider's kind) and model (one of its models), plus okstra's MCP server where the
    sheet registers it; the sheet's `resumeArgv`, `cwd` and `env` must say the same.
    Raises DataFileError naming `path` and the first field that disagrees, LaunchError
    when the CLI is not on PATH.
    """
    where = f"participants[{entry.participant}]"

    def refuse(field_name: str, message: str) -> DataFileError:
        return DataFileError(
            f"{message}; okstra runs only the resume command it rebuilds from the "
            f"provider {provider.id!r} (refusing this resume sheet)",
            path=path,
            field=f"{where}.{field_name}",
        )

    if entry.session_id is None:
        raise refuse("sessionId", "the session id is pending discovery")
    if entry.cli != provider.cli:
        raise refuse("cli", f"cli is {entry.cli!r}, the provider's CLI is {provider.cli!r}")
    if entry.session_id_kind != provider.launch.session_id:
        raise refuse(
            "sessionIdKind",
            f"sessionIdKind is {entry.session_id_kind!r}, the provider's is "
            f"{provider.launch.session_id!r}",
        )
    problem = check_session_id(entry.session_id, provider.launch.session_id)
    if problem is not None:
        raise refuse("sessionId", problem)
    models = [m.execution for m in provider.models]
    if entry.model not in models:
        raise refuse(
            "model",
            f"model {entry.model!r} is not one of the provider's models ({', '.join(models)})",
        )
    plan, served = _resume_plan(
        entry,
        provider,
        mcp,
        model=entry.model,
        prompt_file=prompt_file,
        kickoff=kickoff,
        project_root=project_root,
        environment=environment,
    )
    argv = plan.resume_argv(entry.session_id) or ()  # the id is known: never empty
    recorded = entry.resume_argv or ()
    if len(recorded) != len(argv) or Path(recorded[0]).name != Path(argv[0]).name:
        raise refuse("resumeArgv", f"resumeArgv is {list(recorded)}, expected {list(argv)}")
    for index, (got, want) in enumerate(zip(recorded[1:], argv[1:], strict=True), start=1):
        if got != want and index not in served:
            raise refuse("resumeArgv", f"resumeArgv[{index}] is {got!r}, expected {want!r}")
    if entry.cwd.resolve() != project_root.resolve():
        raise refuse("cwd", f"cwd is {str(entry.cwd)!r}, expected the project {project_root}")
    if dict(entry.env) != dict(plan.env):
        extra = sorted(set(entry.env) - set(plan.env))
        changed = sorted(k for k in plan.env if entry.env.get(k) != plan.env[k])
        shown = ", ".join([*(f"{k} (not the provider's)" for k in extra), *changed])
        raise refuse("env", f"env differs from the provider's launch.env: {shown}")
    return ResumeCommand(argv=argv, cwd=project_root, env=MappingProxyType(dict(plan.env)))


def _resume_plan(
    entry: ResumeEntry, provider: ProviderSpec, mcp: McpServer | None, **launch: Any
) -> tuple[LaunchPlan, range]:
    """The plan to resume `entry` with, and the argv indexes of okstra's MCP server.

    A sheet recording the server's arguments is resumed with this okstra's server, its
    arguments rebuilt (another install may have written the sheet's: not compared).
    """
    plain = plan_launch(provider, **launch)
    if mcp is None:
        return plain, range(0)
    served = plan_launch(provider, mcp=mcp, **launch)
    size = len(served.mcp_argv)
    recorded = entry.resume_argv or ()
    bare = plain.resume_argv(entry.session_id) or ()
    if size and recorded[:1] and tuple(recorded[size + 1 :]) == tuple(bare[1:]):
        return served, range(1, size + 1)
    return plain, range(0)


def find_okstra(environment: Environment) -> str | None:
    """The okstra executable running now (absolute), for scripts to call back."""
    candidates = []
    if Path(sys.argv[0]).name == "okstra":
        candidates.append(Path(sys.argv[0]))
    candidates.append(Path(sys.executable).parent / "okstra")
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate.absolute())
    return environment.which("okstra")
