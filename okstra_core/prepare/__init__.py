"""Prepare: turn a wizard outcome (or the equivalent argv) into a run (SPEC §8).

Public API::

    prepare_from_state(state_path, *, launch="auto", dry_run=False, environment=None,
                       on_step=None) -> PrepareResult
    prepare_from_argv(argv, *, launch="auto", dry_run=False, environment=None,
                      on_step=None) -> PrepareResult

`on_step(str)` is called as each step starts (the TUI's launch screen shows them).
Every refused input raises an `OkstraError` before anything is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..environment import Environment
from .inputs import PrepareInputs, parse_argv
from .pipeline import LAUNCH_CHOICES, PrepareResult, StepCallback, prepare
from .runfiles import PlannedFile, write_immutable

__all__ = [
    "LAUNCH_CHOICES",
    "PlannedFile",
    "PrepareInputs",
    "PrepareResult",
    "parse_argv",
    "prepare",
    "prepare_from_argv",
    "prepare_from_state",
    "write_immutable",
]


def prepare_from_argv(
    argv: Sequence[str],
    *,
    launch: str = "auto",
    dry_run: bool = False,
    environment: Environment | None = None,
    on_step: StepCallback | None = None,
) -> PrepareResult:
    """Prepare (and launch) a run from a wizard outcome's `renderArgv`.

    Args:
        argv: the renderArgv flags (`--project-root … --role-model r=ref …`).
        launch: "auto" | "tmux" | "exec" | "none".
        dry_run: plan and print, write nothing.
        environment: the environment seam (the real one by default).
        on_step: progress callback.
    """
    inputs = parse_argv(argv)
    return prepare(inputs, launch=launch, dry_run=dry_run, environment=environment, on_step=on_step)


def prepare_from_state(
    state_path: Path | str,
    *,
    launch: str = "auto",
    dry_run: bool = False,
    environment: Environment | None = None,
    on_step: StepCallback | None = None,
) -> PrepareResult:
    """Prepare (and launch) the run a confirmed wizard state file describes.

    Raises:
        OkstraError: the wizard is not confirmed (or aborted), or any prepare error.
    """
    from ..wizard import Wizard  # deferred: the wizard engine is only needed here

    env = environment or Environment.real()
    wizard = Wizard.open(Path(state_path), environment=env)
    outcome = wizard.outcome()
    return prepare_from_argv(
        list(outcome.render_argv),
        launch=launch,
        dry_run=dry_run,
        environment=env,
        on_step=on_step,
    )
