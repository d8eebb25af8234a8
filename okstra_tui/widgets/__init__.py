"""Reusable widgets: the history panel, the option table, the confirmation view."""

from .confirmation import ConfirmationView
from .history import HistoryPanel
from .option_table import OptionTable, Row

__all__ = ["ConfirmationView", "HistoryPanel", "OptionTable", "Row"]
