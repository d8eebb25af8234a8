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


def _split(value: str, flag: str, shape: str, problems: list[str]) -> tuple[str, str] | None:
    role, sep, rest = value.partition("=")
    role, rest = role.strip(), rest.strip()
    if not sep or not role or not rest:
        problems.append(f"{flag} {value!r}: expected {shape}")
        return None
    return role, rest


def _role_problem(role: str, profile: Profile, flag: str, value: str) -> str | None:
    if role == LEADER:
        return None
    requirement = profile.role(role)
    if requirement is None:
        known = ", ".join([LEADER, *(r.role for r in profile.static_roles)])
        return (
            f"{flag} {value!r}: unknown role {role!r} for task type "
            f"{profile.task_type!r} (roles: {known})"
        )
    if requirement.dynamic:
        return f"{flag} {value!r}: role {role!r} is dynamic (spawned at run time by the lead)"
    return None


def _raise_all(problems: list[str], flag: str) -> None:
    if problems:
        raise UsageError("; ".join(problems), field=flag)


def parse_role_counts(values: Sequence[str], profile: Profile) -> dict[str, int]:
    """Parse ``role=N`` values into a count per role.

    Args:
        values: the raw ``--role-count`` values.
        profile: the phase's profile (known roles and their ranges).

    Returns:
        role -> count, in the order given.

    Raises:
        UsageError: malformed value, non-integer count, unknown or dynamic role, a role
            given twice, or a count outside the role's ``[min, max]`` — every problem
            named at once.
    """
    counts: dict[str, int] = {}
    problems: list[str] = []
    for value in values:
        parts = _split(value, "--role-count", "'role=N'", problems)
        if parts is None:
            continue
        role, raw = parts
        problem = _role_problem(role, profile, "--role-count", value)
        if problem:
            problems.append(problem)
        elif not raw.isdigit():
            problems.append(f"--role-count {value!r}: count must be a whole number, got {raw!r}")
        elif role in counts:
            problems.append(f"--role-count {value!r}: role {role!r} is given twice")
        else:
            count = int(raw)
            requirement = profile.role(role)
            low, high = (1, 1) if requirement is None else (requirement.min, requirement.max)
            if not low <= count <= high:
                problems.append(
                    f"--role-count {value!r}: {role} count must be between {low} and {high}"
                )
            counts[role] = count
    _raise_all(problems, "--role-count")
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
        UsageError: malformed value, unknown or dynamic role, unknown model — every
            problem named at once.
    """
    models: dict[str, list[str]] = {}
    problems: list[str] = []
    for value in values:
        parts = _split(value, "--role-model", "'role=provider/model'", problems)
        if parts is None:
            continue
        role, raw = parts
        problem = _role_problem(role, profile, "--role-model", value)
        if problem:
            problems.append(problem)
            continue
        try:
            ref = pool.lookup(raw).ref
        except UsageError as exc:
            problems.append(f"--role-model {value!r}: {exc.message}")
            continue
        models.setdefault(role, []).append(ref)
    _raise_all(problems, "--role-model")
    return models
