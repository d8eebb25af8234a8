"""Provider argv templates → argv lists: the rendering lives with the provider files'
records (`okstra_core.catalog.argv`, which readiness uses too); launch names it here."""

from __future__ import annotations

from ..catalog.argv import (
    PLACEHOLDERS,
    WORKER_PLACEHOLDERS,
    placeholders_in,
    render_argv,
    render_element,
    render_env,
)

__all__ = [
    "PLACEHOLDERS",
    "WORKER_PLACEHOLDERS",
    "placeholders_in",
    "render_argv",
    "render_element",
    "render_env",
]
