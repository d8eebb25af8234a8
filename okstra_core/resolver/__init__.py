"""Assignment resolution: one model per role instance, exactly.

The problem: every role instance needs an available model; within a role, instances use
distinct models (``distinct = "model"``) or distinct providers (``distinct =
"provider"``); ``exclude_models_of`` forbids a role to use any model that one of the
listed roles uses. Because that is a condition on the finished team, it binds both
ways once the team is complete: whichever of the two roles is chosen first, the other
may not take the same model. The listed role is not otherwise restricted.

The package: `query` (the `TeamQuery` every function takes, counts and entry-mode
checks), `team` (the team model: roles, candidates, domains, the clash rule),
`solver` (exact feasibility over model classes, knowing nothing of profiles or
pools) and `resolve` (resolution, option states, count feasibility, blockers).

Filling the unchosen instances is deterministic: instance by instance, in team order,
the first candidate (defaults rotated so that instance n starts at default n, then the
pool in registry order) that keeps the whole problem completable. It never dead-ends.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..catalog.models import EntryMode, HostSpec, Profile
from ..defaults import DefaultScopes
from ..pool import ModelPool
from .query import (
    TeamQuery,
    check_counts,
    check_entry_mode,
    minimal_counts,
    role_counts_for,
    role_instances,
)
from .resolve import (
    CURRENT_SESSION_PROVENANCE,
    POOL_PROVENANCE,
    Blocker,
    ModelOptionRows,
    OptionState,
    ResolvedAssignment,
    ResolvedTeam,
    blocker,
    count_options,
    model_option_rows,
    model_options,
    resolve,
    unavailable_defaults,
)

__all__ = [
    "CURRENT_SESSION_PROVENANCE",
    "POOL_PROVENANCE",
    "Blocker",
    "ModelOptionRows",
    "OptionState",
    "ResolvedAssignment",
    "ResolvedTeam",
    "TeamQuery",
    "blocker",
    "check_counts",
    "check_entry_mode",
    "count_options",
    "minimal_counts",
    "model_option_rows",
    "model_options",
    "resolve",
    "resolve_assignments",
    "role_counts_for",
    "role_instances",
    "unavailable_defaults",
]


def resolve_assignments(
    profile: Profile,
    role_counts: Mapping[str, int],
    role_models: Mapping[str, Sequence[str]],
    scopes: DefaultScopes,
    pool: ModelPool,
    host: HostSpec,
    entry_mode: EntryMode,
    *,
    current_session_model: str | None = None,
) -> ResolvedTeam:
    """`resolve` of the query these arguments make (the run pipeline's entry point)."""
    return resolve(
        TeamQuery(
            profile=profile,
            counts=role_counts,
            scopes=scopes,
            pool=pool,
            host=host,
            entry_mode=entry_mode,
            models=role_models,
            current_session_model=current_session_model,
        )
    )
