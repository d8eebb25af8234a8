"""`okstra prepare` subcommands (placeholder until its issue lands)."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    """Add this module's subcommands to the top-level parser."""
    _ = (sub, argparse)
