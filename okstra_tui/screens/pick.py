"""A plain pick prompt: task, task type, reuse, directive or related-tasks choice."""

from __future__ import annotations

from ..resources import stylesheet
from .base import ChoiceScreen


class PickScreen(ChoiceScreen):
    """Choose one option of a `pick` prompt; the default is highlighted."""

    CSS_PATH = stylesheet("pick")
