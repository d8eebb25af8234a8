"""The earlier okstra's (provider, model value) pairs, read as pool models.

A value was an alias (`opus`), a model id (`opus-4.6`), a full ref (`claude/opus-4.6`)
or the CLI execution value (`claude-opus-4-6`), case-insensitively; an empty value was
the provider's default for the role. Both its state files and its prepare flags use this.
Its `OKSTRA_DEFAULT_*` variables are defaults for `okstra prepare`: a new flag (or an
older one) wins over them without a conflict; each one used prints a deprecation note.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from ..errors import UsageError

if TYPE_CHECKING:
    from ..defaults import DefaultScopes
    from ..pool import ModelPool, PoolModel

# The first of these (in profile order) is what the earlier okstra called its workers.
CROSS_VERIFICATION_ROLES = frozenset({"analyser", "designer", "planner", "verifier"})
# The earlier critic values that meant "no critic".
CRITIC_OFF = frozenset({"off", "none", "no"})
# The providers the earlier okstra had a `--<provider>-model` flag and variable for.
MODEL_PROVIDERS = ("claude", "codex", "antigravity", "grok", "kimi")


def roster_providers(items: Iterable[str]) -> list[str]:
    """A worker roster's provider ids, lower-cased; the earlier okstra listed the report
    writer among the workers, which is its own role here."""
    return [
        item.strip().lower()
        for item in items
        if item.strip() and item.strip().lower() != "report-writer"
    ]


def default_candidates(
    pool: ModelPool, scopes: DefaultScopes, role: str
) -> list[tuple[PoolModel, str]]:
    """The role's default candidates (highest scope first) that serve it; [] on a bad ref."""
    try:
        return [(m, p) for m, p in scopes.candidates(role, pool) if role in m.roles]
    except UsageError:
        return []


def legacy_model(
    pool: ModelPool, scopes: DefaultScopes, provider_id: str, role: str, value: str
) -> PoolModel | None:
    """An earlier (provider, model value) as a pool model serving `role`, or None; an
    empty value is the provider's highest-scope default for the role, else its first."""
    provider_id = provider_id.strip().lower()
    provider_models = [m for m in pool.models() if m.provider_id == provider_id]
    if not provider_id or not provider_models:
        return None
    if not value:
        for model, _provenance in default_candidates(pool, scopes, role):
            if model.provider_id == provider_id:
                return model
        return next((m for m in pool.list(role) if m.provider_id == provider_id), None)
    found: PoolModel | None = None
    try:
        if "/" in value:
            candidate = pool.lookup(value)
            found = candidate if candidate.provider_id == provider_id else None
        else:
            found = pool.resolve_alias(provider_id, value)
    except UsageError:
        folded = value.casefold()
        found = next((m for m in provider_models if m.execution.casefold() == folded), None)
    return found if found is not None and role in found.roles else None


LEAD_MODEL_VARIABLE = "OKSTRA_DEFAULT_LEAD_MODEL"
REPORT_WRITER_MODEL_VARIABLE = "OKSTRA_DEFAULT_REPORT_WRITER_MODEL"
EXECUTOR_VARIABLE = "OKSTRA_DEFAULT_EXECUTOR"


def provider_model_variable(provider: str) -> str:
    """`OKSTRA_DEFAULT_<PROVIDER>_MODEL`: a provider's model for its roles."""
    return f"OKSTRA_DEFAULT_{provider.upper()}_MODEL"


# Every variable, with the new form its note names.
ENV_DEFAULTS: dict[str, str] = {
    LEAD_MODEL_VARIABLE: "--role-model leader=claude/<model> (or modelDefaults.leader)",
    REPORT_WRITER_MODEL_VARIABLE: (
        "--role-model report-writer=claude/<model> (or modelDefaults.report-writer)"
    ),
    EXECUTOR_VARIABLE: "--role-model implementer=<model ref> (or modelDefaults.implementer)",
    **{
        provider_model_variable(p): f"--role-model <role>={p}/<model> (or modelDefaults)"
        for p in MODEL_PROVIDERS
    },
}


def variable_value(env: Mapping[str, str], variable: str) -> str:
    """A variable's value, stripped ("" when unset)."""
    return (env.get(variable) or "").strip()


def variables_given(env: Mapping[str, str]) -> list[str]:
    """The variables set to something other than blanks, in `ENV_DEFAULTS` order."""
    return [v for v in ENV_DEFAULTS if variable_value(env, v)]
