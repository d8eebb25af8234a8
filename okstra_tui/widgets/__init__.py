"""Reusable widgets: the history panel, the option table, the confirmation view."""

from .answer_input import AnswerInput
from .confirmation import ConfirmationView, PreflightView
from .footer import KeysFooter
from .history import HistoryPanel
from .option_table import OptionTable, Row

__all__ = [
    "AnswerInput",
    "ConfirmationView",
    "HistoryPanel",
    "KeysFooter",
    "OptionTable",
    "PreflightView",
    "Row",
]
