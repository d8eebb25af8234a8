"""The compatibility wing: what the earlier okstra wrote and accepted, read as today's.

Its wizard state files (v1, and its own v2 shape) and their companion files:
`shapes` (the fields of each shape, and telling them apart), `reader` (typed reading
of a payload), `identity` (task ids as slugs), `roles` (the team, as role steps),
`convert` (a whole state, in memory), `companions` (where progress is saved) and
`opening` (resume or convert; what the wizard's session calls). Its `okstra prepare`
flags and `OKSTRA_DEFAULT_*` variables: `flags` (the command line), `team_flags` (what
the team flags decide), `env_defaults` (the variables) and `lookup` (a provider and a
model value, as a pool model).

The wing sits between the wizard's session and the wizard's state and steps: it reads
the state's shape and the step ids, and nothing of the session. Nothing here writes a
file. The names load on first use: `okstra prepare` reads the flags without loading
the state conversion.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_names

if TYPE_CHECKING:
    from .companions import companion_for, source_digest
    from .convert import convert_earlier_v2, convert_v1
    from .flags import LEGACY_FLAGS, add_legacy_arguments, apply_legacy_inputs, legacy_flags_given
    from .opening import LegacyOpen, load_legacy, open_legacy
    from .shapes import V1_PROVIDER_FIELDS, earlier_companion_source, is_earlier_v2, is_v1

__all__ = [
    "LEGACY_FLAGS",
    "V1_PROVIDER_FIELDS",
    "LegacyOpen",
    "add_legacy_arguments",
    "apply_legacy_inputs",
    "companion_for",
    "convert_earlier_v2",
    "convert_v1",
    "earlier_companion_source",
    "is_earlier_v2",
    "is_v1",
    "legacy_flags_given",
    "load_legacy",
    "open_legacy",
    "source_digest",
]

_LAZY = {
    "companion_for": ".companions",
    "source_digest": ".companions",
    "convert_earlier_v2": ".convert",
    "convert_v1": ".convert",
    "LEGACY_FLAGS": ".flags",
    "add_legacy_arguments": ".flags",
    "apply_legacy_inputs": ".flags",
    "legacy_flags_given": ".flags",
    "LegacyOpen": ".opening",
    "load_legacy": ".opening",
    "open_legacy": ".opening",
    "V1_PROVIDER_FIELDS": ".shapes",
    "earlier_companion_source": ".shapes",
    "is_earlier_v2": ".shapes",
    "is_v1": ".shapes",
}

__getattr__ = lazy_names(__name__, _LAZY)
