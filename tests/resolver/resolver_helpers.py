"""In-memory providers, hosts and profiles for the resolver tests."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from okstra_core.catalog.models import (
    GlobalConfig,
    HostSpec,
    LaunchSpec,
    ModelSpec,
    Profile,
    ProviderSpec,
    RoleRequirement,
)
from okstra_core.environment import Environment
from okstra_core.pool import ModelPool
from tests.conftest import answering_probe

LAUNCH = LaunchSpec(
    version=("{cli}", "--version"),
    new=("{cli}", "--model", "{model}"),
    resume=("{cli}", "--resume", "{session_id}"),
)

TERMINAL = HostSpec(id="terminal", display_label="Terminal")
CLAUDE_CODE = HostSpec(
    id="claude-code",
    display_label="Claude Code",
    native_provider="p0",
    entry_modes=("spawn-process", "current-session"),
    native_sessions=True,
)


def model(
    mid: str,
    *,
    roles: Sequence[str] = (),
    default_for: Sequence[str] = (),
    aliases: Sequence[str] = (),
) -> ModelSpec:
    return ModelSpec(
        id=mid,
        display=mid.upper(),
        execution=f"exec-{mid}",
        roles=tuple(roles),
        default_for=tuple(default_for),
        aliases=tuple(aliases),
    )


def provider(
    pid: str, models: Iterable[ModelSpec], *, roles: Sequence[str], cli: str | None = None
) -> ProviderSpec:
    return ProviderSpec(
        id=pid,
        display_label=pid.title(),
        cli=cli or pid,
        roles=tuple(roles),
        launch=LAUNCH,
        models=tuple(models),
    )


def role(
    name: str,
    *,
    lo: int = 1,
    hi: int = 1,
    recommended: int | None = None,
    distinct: str = "model",
    exclude: Sequence[str] = (),
    dynamic: bool = False,
) -> RoleRequirement:
    return RoleRequirement(
        role=name,
        duty=f"{name}-duty",
        min=lo,
        max=hi,
        recommended=recommended,
        distinct=distinct,  # type: ignore[arg-type]
        exclude_models_of=tuple(exclude),
        dynamic=dynamic,
    )


def profile(*roles: RoleRequirement, task_type: str = "requirements-discovery") -> Profile:
    return Profile(task_type=task_type, roles=tuple(roles))


def env_with(clis: Iterable[str]) -> Environment:
    present = set(clis)
    return Environment(
        env={"PATH": "/fake"},
        which_override=lambda c: f"/fake/{c}" if c in present else None,
        probe_override=answering_probe,
    )


def make_pool(
    providers: Sequence[ProviderSpec],
    clis: Iterable[str] | None = None,
    disabled: Sequence[str] = (),
    source: str = "/cfg/config.json",
) -> ModelPool:
    names = [p.cli for p in providers] if clis is None else clis
    config = GlobalConfig(disabled_providers=tuple(disabled), source=source)
    return ModelPool(providers, env_with(names), config)
