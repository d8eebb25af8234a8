"""The earlier okstra's wizard state files and `okstra prepare` flags, read as today's.

State files (v1, its own v2 shape) and their companions: `shapes`, `roles`, `convert`,
`opening` (what the wizard's session calls). Prepare flags and `OKSTRA_DEFAULT_*`
variables: `flags`, `team_flags`, `lookup`.
It reads the state's shape and the step ids, never the session, and writes no file.
Names load on first use: `okstra prepare` reads the flags without the state conversion.
"""

from __future__ import annotations

from ..lazy import by_module, lazy_names

_LAZY = by_module(
    {
        ".convert": ("convert_earlier_v2", "convert_v1"),
        ".flags": (
            "LEGACY_FLAGS",
            "add_legacy_arguments",
            "apply_legacy_inputs",
            "legacy_flags_given",
        ),
        ".opening": ("LegacyOpen", "companion_for", "open_legacy", "source_digest"),
        ".shapes": ("V1_PROVIDER_FIELDS", "earlier_companion_source", "is_earlier_v2", "is_v1"),
    }
)
__all__ = sorted(_LAZY)
__getattr__ = lazy_names(__name__, _LAZY)
