"""Assignment resolution: one model per role instance, exactly.

Every role instance needs an available model; within a role, instances use distinct
models (``distinct = "model"``) or providers (``"provider"``); ``exclude_models_of``
forbids a role any model a listed role uses — a condition on the finished team, so it
binds both ways, whichever role is chosen first (the listed role is not otherwise
restricted). Modules: `team` (the `TeamQuery`, counts and entry-mode checks; roles,
candidates, domains, the clash rule), `solver` (exact feasibility over model
classes) and `resolve` (resolution, option states, count feasibility, blockers).

Filling the unchosen instances is deterministic and never dead-ends: instance by
instance, in team order, the first candidate (defaults rotated so instance n starts at
default n, then the pool in registry order) that keeps the problem completable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..catalog.models import EntryMode, HostSpec, Profile
from ..defaults import DefaultScopes
from ..pool import ModelPool
from .resolve import Blocker as Blocker
from .resolve import ResolvedAssignment as ResolvedAssignment
from .resolve import ResolvedTeam
from .resolve import blocker as blocker
from .resolve import count_options as count_options
from .resolve import model_option_rows as model_option_rows
from .resolve import model_options as model_options
from .resolve import resolve as resolve
from .resolve import unavailable_defaults as unavailable_defaults
from .team import TeamQuery as TeamQuery
from .team import check_counts as check_counts
from .team import check_entry_mode as check_entry_mode
from .team import role_counts_for as role_counts_for
from .team import role_instances as role_instances


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
            profile, role_counts, scopes, pool, host, entry_mode, role_models, current_session_model
        )
    )
