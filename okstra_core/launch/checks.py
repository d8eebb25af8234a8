"""Preflight: before anything is written, check each CLI okstra will spawn.

The verdict is `readiness.cli_readiness`'s (the one every command and screen reads),
each CLI checked once, every provider at once; results in the order of the instances.
"""

from __future__ import annotations

from collections.abc import Iterable

from okstra_core.catalog.models import LEADER, ProviderSpec, Runner
from okstra_core.environment import Environment

from ..readiness import DEFAULT_TIMEOUT, check_clis
from ..readiness.probes import run_concurrently
from ..records import config, dataclass, fields_of

__all__ = ["PreflightResult", "RoleInstance", "preflight", "run_concurrently"]


@dataclass(frozen=True)
class RoleInstance:
    """One role instance as preflight sees it (`ordinal` 1-based, `runner` its binding's)."""

    role: str
    ordinal: int
    provider: ProviderSpec
    runner: Runner

    @property
    def spawns_cli(self) -> bool:
        """The leader is spawned unless the host session is the lead; others via cli-wrapper."""
        if self.role == LEADER:
            return self.runner != "current-session"
        return self.runner == "cli-wrapper"


@dataclass(frozen=True)
class PreflightResult:
    """The verdict for one role instance (its data ends with the `message`)."""

    __pydantic_config__ = config(
        camel_case=True, aliases={"provider_id": "provider"}, views=("message",)
    )

    instance: str
    role: str
    ordinal: int
    provider_id: str
    cli: str
    ok: bool
    cli_path: str | None = None
    version: str | None = None
    problem: str | None = None
    remedy: str | None = None
    # Found through a PATH entry the project can fill (`readiness.cli`): run, and said.
    warning: str | None = None
    # The CLI's login, told offline (None: cannot tell); a logged-out CLI is not ok.
    logged_in: bool | None = None
    # okstra cannot tell whether it is logged in: ok all the same, and said.
    note: str | None = None

    def message(self) -> str:
        """One line for a person: `leader#1: claude: <problem> — <remedy>`."""
        said = f"; warning: {self.warning}" if self.warning else ""
        said += f"; note: {self.note}" if self.note and self.ok else ""
        if self.ok:
            return f"{self.instance}: {self.cli}: ok ({self.version or 'version unknown'}){said}"
        return f"{self.instance}: {self.cli}: {self.problem} — {self.remedy}{said}"


def preflight(
    instances: Iterable[RoleInstance], environment: Environment, *, timeout: float = DEFAULT_TIMEOUT
) -> list[PreflightResult]:
    """One result per role instance that spawns a CLI, in order: ok when its CLI is
    found, answers, accepts the launch flags (leader) and is not known logged out."""
    spawning = [inst for inst in instances if inst.spawns_cli]
    providers: dict[str, ProviderSpec] = {}
    for inst in spawning:
        providers.setdefault(inst.provider.id, inst.provider)
    verdicts = dict(
        zip(providers, check_clis(providers.values(), environment, timeout=timeout), strict=True)
    )
    results: list[PreflightResult] = []
    for inst in spawning:
        verdict = verdicts[inst.provider.id]
        wrong = verdict.refusal(lead=inst.role == LEADER)
        problem, remedy = wrong if wrong is not None else (None, None)
        results.append(
            PreflightResult(
                instance=f"{inst.role}#{inst.ordinal}",
                **fields_of(inst, "role ordinal"),
                provider_id=inst.provider.id,
                cli=inst.provider.cli,
                ok=wrong is None,
                cli_path=verdict.path,
                problem=problem,
                remedy=remedy,
                **fields_of(verdict, "version warning logged_in"),
                note=verdict.login_note,
            )
        )
    return results
