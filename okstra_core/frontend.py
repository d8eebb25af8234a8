"""What both front ends (the app and `okstra prepare --state`) do with a setup file.

A setup is a confirmed wizard state file. Preparing it: read its run request
(`Wizard.outcome().request`), refuse a second run unless asked for again
(`setup_runs.check_relaunch`), call the core's one entry point
`okstra_core.prepare.prepare(request)`, and remember the run next to the setup.
The core never imports the wizard; this module, above both, joins them.
"""

from __future__ import annotations

from pathlib import Path

from .environment import Environment
from .prepare.pipeline import PrepareResult, StepCallback, prepare
from .request import RunRequest
from .setup_runs import check_relaunch, record_setup_run
from .wizard import Wizard

__all__ = ["prepare_setup", "request_from_state"]


def request_from_state(state_path: Path, environment: Environment) -> RunRequest:
    """The run request of a confirmed wizard state file (`OkstraError` otherwise)."""
    return Wizard.open(Path(state_path), environment=environment).outcome().request


def prepare_setup(
    state_path: Path,
    *,
    launch: str = "auto",
    dry_run: bool = False,
    environment: Environment,
    on_step: StepCallback | None = None,
    again: bool = False,
) -> PrepareResult:
    """Prepare (and launch) the run a confirmed setup describes.

    Raises:
        RelaunchRefused: the setup already prepared a run and `again` is False.
        OkstraError: the wizard is not confirmed (or aborted), or any prepare error.
    """
    request = request_from_state(state_path, environment)
    if not dry_run:
        check_relaunch(Path(state_path), again=again)
    result = prepare(
        request, launch=launch, dry_run=dry_run, environment=environment, on_step=on_step
    )
    if not result.dry_run:
        record_setup_run(
            Path(state_path),
            run_id=result.run_id,
            run_dir=result.run_dir,
            at=environment.now().isoformat(timespec="seconds"),
        )
    return result
