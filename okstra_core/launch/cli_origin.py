"""Where a CLI comes from (`okstra_core.readiness.origin`, named here for launch)."""

from __future__ import annotations

from ..readiness.origin import CliOrigin, entry_risk, locate_cli, warning_line

__all__ = ["CliOrigin", "entry_risk", "locate_cli", "warning_line"]
