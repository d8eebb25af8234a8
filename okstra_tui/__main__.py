"""`python -m okstra_tui` opens the terminal app."""

from __future__ import annotations

from .entry import cli

cli()
