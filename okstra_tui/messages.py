"""Typed messages the screens post up to the app ("attributes down, messages up").

The screens never call the wizard engine: they say what the person chose, and the
app — the one place that talks to `okstra_core` — acts on it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from textual.message import Message

from okstra_core.records import dataclass

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
    env: Mapping[str, str] | None = None
    # The run it leads: okstra stays the CLI's parent and records its exit there.
    run_dir: Path | None = None
    # The lead of an earlier launch, resumed (recorded as running again).
    resumed: bool = False


@dataclasses.dataclass
class Answered(Message):
    """The person answered a prompt with `answer` (an option value or text).

    `step` is the prompt the screen showed: the app drops an answer whose prompt is no
    longer current (a second Enter handled by the old screen).
    """

    answer: str
    step: str | None = None


@dataclasses.dataclass
class RewindRequested(Message):
    """Go back to the answered step `step_id` (history panel or edit screen).

    `checked`: the screen has made sure no typed text is lost (asked, if needed).
    """

    step_id: str
    checked: bool = False


class BackRequested(Message):
    """Back one step (Escape / Backspace)."""


class EditRequested(Message):
    """Show the answered steps to pick one to change (`e`)."""


@dataclasses.dataclass
class WizardChosen(Message):
    """On the start screen: resume the wizard at `path`, or start a new setup (None)."""

    path: Path | None


@dataclasses.dataclass
class DeleteRequested(Message):
    """On the start screen: delete the wizard at `path` (the person confirmed it)."""

    path: Path


@dataclasses.dataclass
class PrepareStep(Message):
    """Prepare finished one step (posted from the prepare worker thread)."""

    step: str


@dataclasses.dataclass
class PrepareFinished(Message):
    """Prepare (and launch, unless `none`) finished; `result` is what it did."""

    result: PrepareResult


@dataclasses.dataclass
class PrepareFailed(Message):
    """Prepare or launch refused; `error` is what the person reads (and can act on)."""

    error: str


@dataclasses.dataclass
class PreflightChecked(Message):
    """The confirm screen's dry-run prepare finished.

    Attributes:
        results: preflight results per CLI-spawning role instance.
        notes: other problems the dry run found (each a sentence to act on).
        error: set instead when the dry run refused the setup outright.
        plan: the dry run's `PrepareResult` (lead command, backend, files), or None.
    """

    results: tuple[PreflightResult, ...] = ()
    notes: tuple[str, ...] = ()
    error: str | None = None
    plan: PrepareResult | None = None


class PrepareRequested(Message):
    """Prepare and launch the confirmed wizard (Enter on a waiting launch screen)."""


@dataclasses.dataclass
class OpenRunRequested(Message):
    """Open the run in `run_dir` a launched setup started (Enter on its launch screen)."""

    run_dir: Path


@dataclasses.dataclass
class DefaultsRequested(Message):
    """Answer model step `step` and the next ones with their defaults (`d`), up to the
    first whose default cannot be chosen or that is not a model step."""

    step: str
