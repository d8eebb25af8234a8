"""Prepare: turn a run request into a run (files on disk, then the lead launched).

`prepare(request)` (`pipeline`) is the core's one entry point; front ends build the
`RunRequest`. This package never imports the wizard.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import by_module, lazy_names

if TYPE_CHECKING:
    from .pipeline import LAUNCH_CHOICES as LAUNCH_CHOICES
    from .pipeline import PrepareResult as PrepareResult
    from .pipeline import StepCallback as StepCallback
    from .pipeline import prepare as prepare
    from .runfiles import PlannedFile as PlannedFile
    from .runfiles import write_immutable as write_immutable

# Names load on first use: importing a submodule must not pull in the whole pipeline.
_LAZY = by_module(
    {
        ".pipeline": ("LAUNCH_CHOICES", "PrepareResult", "StepCallback", "prepare"),
        ".runfiles": ("PlannedFile", "write_immutable"),
    }
)


__getattr__ = lazy_names(__name__, _LAZY)


__all__ = sorted(_LAZY)
