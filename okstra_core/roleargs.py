"""Parsing of `--role-count role=N` and `--role-model role=model_ref` arguments.

Shared by `okstra team` and `okstra prepare`: both take the same flags, so they parse
them with the same rules and messages.
"""

from __future__ import annotations

from collections.abc import Sequence

from .catalog.models import LEADER, Profile
from .errors import UsageError
from .pool import ModelPool

__all__ = ["parse_role_counts", "parse_role_models"]


def _split(value: str, flag: str, shape: str) -> tuple[str, str]:
    role, sep, rest = value.partition("=")
    role, rest = role.strip(), rest.strip()
    if not sep or not role or not rest:
        raise UsageError(f"{flag} {value!r}: expected {shape}")
    return role, rest


def _known_role(role: str, profile: Profile, flag: str, value: str) -> None:
    if role == LEADER:
        return
    requirement = profile.role(role)
    if requirement is None:
        known = ", ".join([LEADER, *(r.role for r in profile.static_roles)])
        raise UsageError(
            f"{flag} {value!r}: unknown role {role!r} for task type "
            f"{profile.task_type!r} (roles: {known})"
        )
    if requirement.dynamic:
        raise UsageError(
            f"{flag} {value!r}: role {role!r} is dynamic (spawned at run time by the lead)"
        )


def parse_role_counts(values: Sequence[str], profile: Profile) -> dict[str, int]:
    """Parse ``role=N`` values into a count per role.

    Args:
        values: the raw ``--role-count`` values.
        profile: the phase's profile (known roles and their ranges).

    Returns:
        role -> count, in the order given.

    Raises:
        UsageError: malformed value, non-integer count, unknown or dynamic role, a role
            given twice, or a count outside the role's ``[min, max]``.
    """
    counts: dict[str, int] = {}
    for value in values:
        role, raw = _split(value, "--role-count", "'role=N'")
        _known_role(role, profile, "--role-count", value)
        if not raw.isdigit():
            raise UsageError(f"--role-count {value!r}: count must be a whole number, got {raw!r}")
        if role in counts:
            raise UsageError(f"--role-count {value!r}: role {role!r} is given twice")
        count = int(raw)
        requirement = profile.role(role)
        low, high = (1, 1) if requirement is None else (requirement.min, requirement.max)
        if not low <= count <= high:
            raise UsageError(
                f"--role-count {value!r}: {role} count must be between {low} and {high}"
            )
        counts[role] = count
    return counts


def parse_role_models(
    values: Sequence[str], profile: Profile, pool: ModelPool
) -> dict[str, list[str]]:
    """Parse ``role=model_ref`` (or ``role=provider/alias``) values.

    Repeating a role gives its next ordinal: ``analyser=a analyser=b`` is analyser #1 =
    a, #2 = b. Aliases are resolved to model refs (case-insensitive).

    Args:
        values: the raw ``--role-model`` values.
        profile: the phase's profile (known roles).
        pool: the model pool (known models and aliases).

    Returns:
        role -> model refs in ordinal order.

    Raises:
        UsageError: malformed value, unknown or dynamic role, unknown model.
    """
    models: dict[str, list[str]] = {}
    for value in values:
        role, raw = _split(value, "--role-model", "'role=provider/model'")
        _known_role(role, profile, "--role-model", value)
        try:
            ref = pool.lookup(raw).ref
        except UsageError as exc:
            raise UsageError(f"--role-model {value!r}: {exc.message}") from None
        models.setdefault(role, []).append(ref)
    return models
