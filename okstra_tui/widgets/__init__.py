"""Reusable widgets; `Plain` is the one way data is shown (never markup or control
sequences)."""

from .answer_input import AnswerInput
from .confirmation import ConfirmationView, PreflightView
from .footer import KeysFooter
from .history import HistoryPanel
from .option_table import OptionTable, Row
from .plain import Plain, block, line

__all__ = [
    "AnswerInput",
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
