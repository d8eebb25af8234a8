"""Fixtures of the terminal-app tests; the helpers live in `tui_support`.

Test modules import helpers from `tui_support`, never from `conftest`: several test
directories have a `conftest.py`, so `from conftest import …` depends on import order.
"""

from __future__ import annotations

from tui_support import (
    _fake_cli_help,
    _okstra_on_path,
    _quick_arming,
    app_factory,
    project,
    stable_project,
)

__all__ = [
    "_fake_cli_help",
    "_okstra_on_path",
    "_quick_arming",
    "app_factory",
    "project",
    "stable_project",
]
