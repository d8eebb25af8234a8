"""The earlier okstra's (provider, model value) pairs, read as pool models.

The earlier okstra named a model by its provider and a value: an alias (`opus`), a
model id (`opus-4.6`), a full ref (`claude/opus-4.6`) or the CLI execution value
(`claude-opus-4-6`), case-insensitively; an empty value was the provider's default for
the role. One reading serves both the conversion of its state files and its prepare
flags.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import UsageError
from ..vocabulary import EARLIER_DEFAULT_PROVIDER

if TYPE_CHECKING:
    from ..defaults import DefaultScopes
    from ..pool import ModelPool, PoolModel

__all__ = [
    "CRITIC_OFF",
    "CROSS_VERIFICATION_ROLES",
    "EARLIER_DEFAULT_PROVIDER",
    "MODEL_PROVIDERS",
    "default_candidates",
    "legacy_model",
    "provider_default",
]

# The first of these (in profile order) is what the earlier okstra called its workers.
CROSS_VERIFICATION_ROLES = frozenset({"analyser", "designer", "planner", "verifier"})
# The earlier critic values that meant "no critic".
CRITIC_OFF = frozenset({"off", "none", "no"})
# The providers the earlier okstra had a `--<provider>-model` flag and variable for.
MODEL_PROVIDERS = ("claude", "codex", "antigravity", "grok", "kimi")


def default_candidates(
    pool: ModelPool, scopes: DefaultScopes, role: str
) -> list[tuple[PoolModel, str]]:
    """The role's default candidates (highest scope first) that serve it; [] on a bad ref."""
    try:
        return [(m, p) for m, p in scopes.candidates(role, pool) if role in m.roles]
    except UsageError:
        return []


def provider_default(
    pool: ModelPool, scopes: DefaultScopes, provider_id: str, role: str
) -> PoolModel | None:
    """A provider's default model for a role: its highest-scope default, else its first."""
    for model, _provenance in default_candidates(pool, scopes, role):
        if model.provider_id == provider_id:
            return model
    return next((m for m in pool.list(role) if m.provider_id == provider_id), None)


def legacy_model(
    pool: ModelPool, scopes: DefaultScopes, provider_id: str, role: str, value: str
) -> PoolModel | None:
    """Map an earlier (provider, model value) to a pool model for `role`, or None.

    A value may be an alias (`opus`), a model id (`opus-4.6`), a full ref
    (`claude/opus-4.6`) or the CLI execution value (`claude-opus-4-6`); an empty value is
    the provider's default for the role. None: unknown provider or model, or a model
    that does not serve the role.
    """
    provider_id = provider_id.strip().lower()
    if not provider_id:
        return None
    provider_models = [m for m in pool.models() if m.provider_id == provider_id]
    if not provider_models:
        return None
    if not value:
        return provider_default(pool, scopes, provider_id, role)
    model: PoolModel | None = None
    try:
        if "/" in value:
            candidate = pool.lookup(value)
            model = candidate if candidate.provider_id == provider_id else None
        else:
            model = pool.resolve_alias(provider_id, value)
    except UsageError:
        folded = value.casefold()
        model = next((m for m in provider_models if m.execution.casefold() == folded), None)
    if model is None or role not in model.roles:
        return None
    return model
