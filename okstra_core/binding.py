"""Runner choice and host model binding.

A role instance runs through one of three runners:

- ``current-session`` — the leader, when the entry mode is ``current-session``: the host
  session *is* the lead, so no model is chosen and nothing is bound here;
- ``native-session`` — a worker whose provider is the host's native provider, on a host
  that runs same-provider sessions natively (e.g. Claude Code sub-agents): the host is
  told the provider's execution value;
- ``cli-wrapper`` — everything else: okstra or the lead spawns the provider's CLI.

The leader in ``spawn-process`` mode is always ``cli-wrapper``: okstra starts it as a
new process of its provider's CLI, so it is never a sub-session of the host.
"""

from __future__ import annotations

from typing import Protocol

from .catalog.models import LEADER, EntryMode, HostSpec, Runner
from .errors import OkstraError
from .records import dataclass
from .vocabulary import CLI_WRAPPER, CURRENT_SESSION, CURRENT_SESSION_RUNNER, NATIVE_SESSION

__all__ = ["Binding", "BoundModel", "bind", "choose_runner"]


class BoundModel(Protocol):
    """What binding reads of a model: its provider and the CLI's model value.

    The pool's `PoolModel` is one; binding knows nothing else of the pool (the pool
    asks binding which runner a model would take, never the other way round).
    """

    @property
    def provider_id(self) -> str: ...

    @property
    def execution(self) -> str: ...


@dataclass(frozen=True)
class Binding:
    """How one role instance's model is bound on the host.

    Attributes:
        runner: which runner executes the instance.
        host_runtime: the host id the binding was made for.
        host_model_value: what the host is told for a native session; None otherwise.
    """

    runner: Runner
    host_runtime: str
    host_model_value: str | None


def choose_runner(role: str, provider_id: str, host: HostSpec, entry_mode: EntryMode) -> Runner:
    """Pick the runner of a role instance.

    Args:
        role: the role id.
        provider_id: the provider of the instance's model.
        host: the host runtime the lead lives in.
        entry_mode: ``spawn-process`` or ``current-session``.

    Returns:
        ``current-session``, ``native-session`` or ``cli-wrapper``.
    """
    if role == LEADER:
        # In spawn-process mode okstra launches the lead's CLI itself.
        return CURRENT_SESSION_RUNNER if entry_mode == CURRENT_SESSION else CLI_WRAPPER
    if (
        host.native_sessions
        and host.native_provider is not None
        and provider_id == host.native_provider
    ):
        return NATIVE_SESSION
    return CLI_WRAPPER


def bind(model: BoundModel, role: str, host: HostSpec, entry_mode: EntryMode) -> Binding:
    """Bind a model for a role instance on a host.

    Args:
        model: the model (a pool model).
        role: the role id.
        host: the host runtime.
        entry_mode: the entry mode.

    Returns:
        A `Binding`: ``cli-wrapper`` carries no host model value, ``native-session``
        carries the model's execution value.

    Raises:
        OkstraError: ``unsupported host model: host=…, provider=…, model=…`` for any
            other combination (e.g. a current-session leader, which has no model to bind,
            or a native session the host cannot run).
    """
    runner = choose_runner(role, model.provider_id, host, entry_mode)
    if runner == CLI_WRAPPER:
        return Binding(runner=runner, host_runtime=host.id, host_model_value=None)
    if (
        runner == NATIVE_SESSION
        and host.native_sessions
        and model.provider_id == host.native_provider
        and model.execution.strip()
    ):
        return Binding(runner=runner, host_runtime=host.id, host_model_value=model.execution)
    raise OkstraError(
        f"unsupported host model: host={host.id!r}, provider={model.provider_id!r}, "
        f"model={model.execution!r}"
    )
