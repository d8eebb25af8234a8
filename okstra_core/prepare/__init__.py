"""Prepare: turn a wizard outcome (or the equivalent argv) into a run (SPEC §8).

Public API::

    prepare_from_state(state_path, *, launch="auto", dry_run=False, environment=None,
                       on_step=None, again=False) -> PrepareResult
        # A setup that already prepared a run is refused (RelaunchRefused, exit 2)
        # unless again=True; each run it prepares is remembered next to it.
    prepare_from_argv(argv, *, launch="auto", dry_run=False, environment=None,
                      on_step=None) -> PrepareResult

`on_step(str)` is called as each step starts (the TUI's launch screen shows them).
Every refused input raises an `OkstraError` before anything is written.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..environment import Environment
from ..setup_runs import check_relaunch, record_setup_run

if TYPE_CHECKING:
    from .inputs import PrepareInputs, parse_argv
    from .pipeline import LAUNCH_CHOICES, PrepareResult, StepCallback, prepare
    from .runfiles import PlannedFile, write_immutable

# The package's names load on first use: `okstra wizard step` builds the whole CLI
# parser, whose `prepare` flags come from `.inputs`, and importing a submodule runs this
# file — it must not pull in the pipeline (manifest, plan check, run files, launch).
_LAZY = {
    "PrepareInputs": ".inputs",
    "parse_argv": ".inputs",
    "LAUNCH_CHOICES": ".pipeline",
    "PrepareResult": ".pipeline",
    "StepCallback": ".pipeline",
    "prepare": ".pipeline",
    "PlannedFile": ".runfiles",
    "write_immutable": ".runfiles",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


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
    from .inputs import parse_argv
    from .pipeline import prepare

    inputs = parse_argv(argv)
    return prepare(inputs, launch=launch, dry_run=dry_run, environment=environment, on_step=on_step)


def prepare_from_state(
    state_path: Path | str,
    *,
    launch: str = "auto",
    dry_run: bool = False,
    environment: Environment | None = None,
    on_step: StepCallback | None = None,
    again: bool = False,
) -> PrepareResult:
    """Prepare (and launch) the run a confirmed wizard state file describes.

    Args:
        again: launch another run of a setup that already prepared one.

    Raises:
        RelaunchRefused: the setup already prepared a run and `again` is False.
        OkstraError: the wizard is not confirmed (or aborted), or any prepare error.
    """
    from ..wizard import Wizard  # deferred: the wizard engine is only needed here

    env = environment or Environment.real()
    wizard = Wizard.open(Path(state_path), environment=env)
    outcome = wizard.outcome()
    if not dry_run:
        check_relaunch(Path(state_path), again=again)
    result = prepare_from_argv(
        list(outcome.render_argv),
        launch=launch,
        dry_run=dry_run,
        environment=env,
        on_step=on_step,
    )
    if not result.dry_run:
        record_setup_run(
            Path(state_path),
            run_id=result.run_id,
            run_dir=result.run_dir,
            at=env.now().isoformat(timespec="seconds"),
        )
    return result
