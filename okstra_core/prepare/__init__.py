"""Prepare: turn a run request into a run (files on disk, then the lead launched).

Public API::

    prepare(request, *, launch="auto", dry_run=False, environment=None, on_step=None)
        -> PrepareResult

`prepare(request)` is the core's one entry point: front ends build the
`okstra_core.request.RunRequest` (the app and `okstra prepare --state` from a wizard's
outcome, `okstra prepare <renderArgv…>` through `okstra_core.cli.roleargs.request_from_argv`).
This package never imports the wizard. `on_step(str)` is called as each step starts
(the app's launch screen shows them). Every refused input raises an `OkstraError`
before anything is written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_names

if TYPE_CHECKING:
    from .pipeline import LAUNCH_CHOICES, PrepareResult, StepCallback, prepare
    from .runfiles import PlannedFile, write_immutable

# The package's names load on first use: importing a submodule (`runfiles` for
# `okstra resume`) runs this file, and must not pull in the whole pipeline.
_LAZY = {
    "LAUNCH_CHOICES": ".pipeline",
    "PrepareResult": ".pipeline",
    "StepCallback": ".pipeline",
    "prepare": ".pipeline",
    "PlannedFile": ".runfiles",
    "write_immutable": ".runfiles",
}


__getattr__ = lazy_names(__name__, _LAZY)


__all__ = [
    "LAUNCH_CHOICES",
    "PlannedFile",
    "PrepareResult",
    "StepCallback",
    "prepare",
    "write_immutable",
]
