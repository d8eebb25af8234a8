"""okstra core: domain, wizard state machine, resolver, store, prepare, launch.

This package never imports textual (checked by tests/core/test_no_textual.py).
"""

from __future__ import annotations

__version__ = "0.2.0"
