"""Runner choice and host model binding.

``current-session`` (a current-session leader), ``native-session`` (a worker of the
host's native provider) or ``cli-wrapper`` (everything else).
"""

from __future__ import annotations

from typing import Protocol

from .catalog.models import LEADER, EntryMode, HostSpec, Runner
from .errors import OkstraError
from .records import dataclass
from .vocabulary import CLI_WRAPPER, CURRENT_SESSION, CURRENT_SESSION_RUNNER, NATIVE_SESSION


class BoundModel(Protocol):
    """What binding reads of a model (the pool's `PoolModel` is one)."""

    @property
    def provider_id(self) -> str: ...

    @property
    def execution(self) -> str: ...


@dataclass(frozen=True)
class Binding:
    """How one role instance's model is bound (`host_model_value`: native sessions only)."""

    runner: Runner
    host_runtime: str
    host_model_value: str | None


def choose_runner(role: str, provider_id: str, host: HostSpec, entry_mode: EntryMode) -> Runner:
    """Pick the runner of a role instance: current-session, native-session or cli-wrapper."""
    if role == LEADER:
        return CURRENT_SESSION_RUNNER if entry_mode == CURRENT_SESSION else CLI_WRAPPER
    if (
        host.native_sessions
        and host.native_provider is not None
        and provider_id == host.native_provider
    ):
        return NATIVE_SESSION
    return CLI_WRAPPER


def bind(model: BoundModel, role: str, host: HostSpec, entry_mode: EntryMode) -> Binding:
    """Bind a model for a role instance on a host (`OkstraError`: unsupported host model)."""
    runner = choose_runner(role, model.provider_id, host, entry_mode)
    if runner == CLI_WRAPPER:
        return Binding(runner=runner, host_runtime=host.id, host_model_value=None)
    if runner == NATIVE_SESSION and model.execution.strip():
        return Binding(runner=runner, host_runtime=host.id, host_model_value=model.execution)
    raise OkstraError(
        f"unsupported host model: host={host.id!r}, provider={model.provider_id!r}, "
        f"model={model.execution!r}"
    )
