"""Typed messages the screens post up to the app ("attributes down, messages up").

The screens never call the wizard engine: they say what the person chose, and the
app — the one place that talks to `okstra_core` — acts on it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.message import Message


class Answered(Message):
    """The person answered the current prompt with `answer` (an option value or text)."""

    def __init__(self, answer: str) -> None:
        super().__init__()
        self.answer = answer


class RewindRequested(Message):
    """Go back to an answered step (history panel or edit screen): edit & rewind."""

    def __init__(self, step_id: str) -> None:
        super().__init__()
        self.step_id = step_id


class BackRequested(Message):
    """Back one step (Escape / Backspace)."""


class EditRequested(Message):
    """Show the answered steps to pick one to change (`e`)."""


class WizardChosen(Message):
    """On the start screen: resume the wizard at `path`, or start a new setup (None)."""

    def __init__(self, path: Path | None) -> None:
        super().__init__()
        self.path = path


class DeleteRequested(Message):
    """On the start screen: delete the wizard at `path` (the person confirmed it)."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path


class PrepareStep(Message):
    """Prepare finished one step (posted from the prepare worker thread)."""

    def __init__(self, step: str) -> None:
        super().__init__()
        self.step = step


class PrepareFinished(Message):
    """Prepare (and launch, unless `none`) finished; `result` is a PrepareResult."""

    def __init__(self, result: Any) -> None:
        super().__init__()
        self.result = result


class PrepareFailed(Message):
    """Prepare or launch refused; `error` is what the person reads (and can act on)."""

    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error


class PreflightChecked(Message):
    """The confirm screen's dry-run prepare finished.

    Attributes:
        results: preflight results per CLI-spawning role instance.
        notes: other problems the dry run found (each a sentence to act on).
        error: set instead when the dry run refused the setup outright.
    """

    def __init__(
        self, results: tuple[Any, ...] = (), notes: tuple[str, ...] = (), error: str | None = None
    ) -> None:
        super().__init__()
        self.results = results
        self.notes = notes
        self.error = error


class PrepareRequested(Message):
    """Prepare and launch the confirmed wizard (Enter on a waiting launch screen)."""
