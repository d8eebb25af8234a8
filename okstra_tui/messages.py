"""Typed messages the screens post up to the app ("attributes down, messages up").

The screens never call the wizard engine: they say what the person chose, and the
app — the one place that talks to `okstra_core` — acts on it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from textual.message import Message

from okstra_core.records import dataclass, field

if TYPE_CHECKING:
    from okstra_core.launch import PreflightResult
    from okstra_core.prepare import PrepareResult


@dataclass(frozen=True)
class LaunchRequest:
    """What the app returns when the lead CLI should take over this terminal.

    entry.py runs `argv` (in `cwd`, with `env`) after Textual restored the terminal.
    """

    argv: tuple[str, ...]
    cwd: Path
    env: Mapping[str, str] | None = field(default=None)
    # The run it leads: okstra stays the CLI's parent and records its exit there.
    run_dir: Path | None = field(default=None)
    # The lead of an earlier launch, resumed (recorded as running again).
    resumed: bool = field(default=False)


class Answered(Message):
    """The person answered a prompt with `answer` (an option value or text).

    Attributes:
        answer: the option value or the text.
        step: the id of the prompt the screen showed; the app drops an answer whose
            prompt is no longer current (a second Enter handled by the old screen).
    """

    def __init__(self, answer: str, *, step: str | None = None) -> None:
        super().__init__()
        self.answer = answer
        self.step = step


class RewindRequested(Message):
    """Go back to an answered step (history panel or edit screen): edit & rewind.

    Attributes:
        step_id: the answered step to go back to.
        checked: the screen has made sure no typed text is lost (asked, if needed);
            until then the screen holds the message back.
    """

    def __init__(self, step_id: str, *, checked: bool = False) -> None:
        super().__init__()
        self.step_id = step_id
        self.checked = checked


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
    """Prepare (and launch, unless `none`) finished; `result` is what it did."""

    def __init__(self, result: PrepareResult) -> None:
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
        plan: the dry run's `PrepareResult` (lead command, backend, files), or None.
    """

    def __init__(
        self,
        results: tuple[PreflightResult, ...] = (),
        notes: tuple[str, ...] = (),
        error: str | None = None,
        plan: PrepareResult | None = None,
    ) -> None:
        super().__init__()
        self.results = results
        self.notes = notes
        self.error = error
        self.plan = plan


class PrepareRequested(Message):
    """Prepare and launch the confirmed wizard (Enter on a waiting launch screen)."""


class OpenRunRequested(Message):
    """Open the run a launched setup started (Enter on its waiting launch screen).

    Attributes:
        run_dir: the run's directory.
    """

    def __init__(self, run_dir: Path) -> None:
        super().__init__()
        self.run_dir = run_dir


class DefaultsRequested(Message):
    """Answer this model step and the next ones with their defaults (`d`).

    Stops at the first model step whose default cannot be chosen, and at the first
    step that is not a model step. `step` is the prompt the screen showed.
    """

    def __init__(self, *, step: str) -> None:
        super().__init__()
        self.step = step
