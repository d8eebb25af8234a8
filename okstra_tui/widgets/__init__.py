"""Reusable widgets; `Plain` is the one way data is shown (never markup or control
sequences)."""

from .confirmation import ConfirmationView, PreflightView
from .history import HistoryPanel, KeysFooter
from .option_table import OptionTable, Row
from .plain import Plain, block, line

__all__ = [
    "ConfirmationView",
    "HistoryPanel",
    "KeysFooter",
    "OptionTable",
    "Plain",
    "PreflightView",
    "Row",
    "block",
    "line",
]
