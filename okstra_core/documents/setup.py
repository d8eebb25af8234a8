"""`<setup>.runs.jsonl`: the runs a setup (a wizard state file) prepared, one a line.

Read by `okstra_core.setup_runs`, which refuses a second prepare of the same setup;
kept apart from the other documents so that reading it costs only this record.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from ..records import config, dataclass
from .base import Document

if TYPE_CHECKING:
    from pydantic import StrictStr

__all__ = ["RunPlace", "SetupRun"]


@dataclass(frozen=True, kw_only=True)
class RunPlace:
    """Which run a setup prepared, and where: a refusal's `existingRun`."""

    __pydantic_config__ = config(camel_case=True)

    run_id: StrictStr | None = None
    run_dir: StrictStr


@dataclass(frozen=True, kw_only=True)
class SetupRun(Document):
    """One line of a setup's runs file: when it prepared which run, and where.

    A line without `at` or `runId` (an edited file) still names the run by its
    directory; keys okstra does not write are ignored.
    """

    __pydantic_config__ = config(camel_case=True, by_name=True, extra="ignore")
    WHAT: ClassVar[str] = "setup run"

    at: StrictStr | None = None
    run_id: StrictStr | None = None
    run_dir: StrictStr

    @property
    def place(self) -> RunPlace:
        return RunPlace(run_id=self.run_id, run_dir=self.run_dir)
