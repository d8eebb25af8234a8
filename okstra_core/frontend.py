"""What both front ends (the app and `okstra prepare --state`) do with a setup file.

Above both the wizard and the core: a setup's request is prepared and remembered.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from .environment import Environment
from .prepare.pipeline import PrepareResult, StepCallback, prepare
from .request import RunRequest
from .session import Wizard
from .setup_runs import check_relaunch, record_setup_run
from .vocabulary import LeadAccess


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
    mcp: bool | None = None,
    lead_access: LeadAccess | None = None,
) -> PrepareResult:
    """Prepare (and launch) the run a confirmed setup describes (`RelaunchRefused`)."""
    path = Path(state_path)
    request = request_from_state(path, environment)
    if lead_access is not None:
        request = dataclasses.replace(request, lead_access=lead_access)
    if not dry_run:
        check_relaunch(path, again=again)
    return _prepare_and_record(path, request, launch, dry_run, environment, on_step, mcp)


def prepare_replayed(
    wizard: Wizard,
    *,
    launch: str = "auto",
    dry_run: bool = False,
    environment: Environment,
    on_step: StepCallback | None = None,
    mcp: bool | None = None,
) -> PrepareResult:
    """Save and prepare a new setup replayed in this process (`Wizard.replay_new`).

    A dry run writes nothing; otherwise the setup is written first (for `--state` retry).
    """
    request = wizard.outcome().request
    if not dry_run:
        if on_step is not None:
            on_step("saving the setup")
        wizard.save_new()
    return _prepare_and_record(wizard.path, request, launch, dry_run, environment, on_step, mcp)


def _prepare_and_record(
    state_path: Path,
    request: RunRequest,
    launch: str,
    dry_run: bool,
    environment: Environment,
    on_step: StepCallback | None,
    mcp: bool | None,
) -> PrepareResult:
    result = prepare(
        request, launch=launch, dry_run=dry_run, environment=environment, on_step=on_step, mcp=mcp
    )
    record_lead_exit(result, environment)
    if not result.dry_run:
        record_setup_run(
            state_path,
            run_id=result.run_id,
            run_dir=result.run_dir,
            at=environment.now().isoformat(timespec="seconds"),
        )
    return result


def record_lead_exit(result: PrepareResult, environment: Environment) -> None:
    """After a launch: record the end of a lead that exited while watched; watch a tmux lead."""
    launch = result.launch
    lead_exit = launch.lead_exit if launch is not None else None
    if launch is not None and launch.backend == "tmux" and result.ok and not result.dry_run:
        from .life.watcher import start_watcher

        start_watcher(result.run_dir, environment)
    if lead_exit is None:
        return
    from .life.lead import record_end

    record_end(
        result.run_dir,
        environment=environment,
        exit_status=lead_exit.exit_status,
        signal_number=lead_exit.signal,
        lines=lead_exit.last_lines,
    )
