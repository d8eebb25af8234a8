"""What a prepare did: `PrepareResult`, the protocol's reply to `okstra prepare`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ..records import config, dataclass
from .manifest import ExecutionManifest
from .runfiles import PlannedFile

if TYPE_CHECKING:
    from ..launch import LaunchResult, PreflightResult
    from ..launch.watch import LeadExit

__all__ = ["PrepareResult", "TeamMember", "team_of"]


@dataclass(frozen=True)
class TeamMember:
    """One role execution as the prepare reply lists it (`team`)."""

    __pydantic_config__ = config(camel_case=True)

    role_execution_ref: str
    participant_ref: str
    role: str
    ordinal: int
    model_ref: str | None
    runner: str
    execution_label: str


def team_of(manifest: ExecutionManifest) -> tuple[TeamMember, ...]:
    """The reply's `team`: every role execution, in the manifest's order."""
    return tuple(
        TeamMember(
            role_execution_ref=r.role_execution_ref,
            participant_ref=r.participant_ref,
            role=r.role,
            ordinal=r.ordinal,
            model_ref=r.model_ref,
            runner=r.binding.runner,
            execution_label=r.execution_label,
        )
        for r in manifest.role_executions
    )


@dataclass(frozen=True, kw_only=True)
class PrepareResult:
    """What a prepare did (or, for a dry run, would do).

    Its protocol data begins with `ok` and ends with the launch's `error`; `manifest` and
    `exec_env` are for Python only. `notes`: problems a dry run found; `exec_argv`: what
    the caller execs (exec backend); `base_ref`/`base_commit`: the writers' base.
    """

    __pydantic_config__ = config(
        camel_case=True,
        skip=("manifest", "exec_env"),
        views=("ok", "error"),
        first=("ok",),
        omit_none=("error", "base_ref", "base_commit"),
    )

    dry_run: bool
    run_id: str
    run_dir: Path
    entry_mode: str
    files: tuple[PlannedFile, ...]
    lead_argv: tuple[str, ...] | None
    lead_env: Mapping[str, str]
    lead_session_id: str | None = None
    tmux_commands: tuple[tuple[str, ...], ...]
    preflight: tuple[PreflightResult, ...]
    backend: str
    lead_prompt_path: Path
    resume_argv: tuple[str, ...] | None = None
    team: tuple[TeamMember, ...]
    launch: LaunchResult | None = None
    exec_argv: tuple[str, ...] | None = None
    notes: tuple[str, ...] = ()
    manifest: ExecutionManifest
    exec_env: Mapping[str, str] | None = None
    base_ref: str | None = None
    base_commit: str | None = None
    lead_access: str = "ask"

    @property
    def ok(self) -> bool:
        """Launched (or nothing to launch), and the lead did not exit while watched."""
        return self.launch is None or (self.launch.error is None and not self.lead_exited)

    @property
    def lead_exited(self) -> bool:
        """The lead started, then exited while okstra watched its start."""
        return self.launch is not None and self.launch.lead_exit is not None

    @property
    def error(self) -> str | None:
        """Why the launch failed, or that the lead exited at once, or None."""
        if self.launch is None:
            return None
        if self.launch.lead_exit is not None:
            return lead_exit_text(self.launch.lead_exit, self.run_id)
        return self.launch.error_text


def lead_exit_text(lead_exit: LeadExit, run_id: str) -> str:
    """`the lead exited 1 after 1.6 s: <last lines>; …` with what to do next."""
    said = [line.strip() for line in lead_exit.last_lines if line.strip()][-5:]
    tail = f": {' | '.join(said)}" if said else ""
    return (
        f"{lead_exit.headline()}{tail}; check its CLI with `okstra doctor` (installed, logged "
        f"in?), then resume it with `okstra resume {run_id} --exec` or prepare again"
    )
