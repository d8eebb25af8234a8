"""The earlier okstra's `OKSTRA_DEFAULT_*` variables: defaults for `okstra prepare`.

A new flag (or an older one) wins over them without a conflict; each one used prints a
deprecation note naming the new form (`okstra_core.compat.flags`).
"""

from __future__ import annotations

from collections.abc import Mapping

from .lookup import MODEL_PROVIDERS

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
