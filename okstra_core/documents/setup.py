"""`<setup>.runs.jsonl`: the runs a setup prepared, one a line (`okstra_core.setup_runs`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from ..records import config, dataclass
from .base import Document

if TYPE_CHECKING:
    from pydantic import StrictStr


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

    @classmethod
    def of_line(cls, line: Any) -> SetupRun | None:
        """A line of the file as read, or None when it names no directory; read without
        pydantic (the app's first screen reads every setup's runs file). An `at` or a
        `runId` that is not a text is read as none."""
        if not isinstance(line, dict) or not isinstance(line.get("runDir"), str):
            return None
        at, run_id = line.get("at"), line.get("runId")
        return cls(
            at=at if isinstance(at, str) else None,
            run_id=run_id if isinstance(run_id, str) else None,
            run_dir=line["runDir"],
        )

    @property
    def place(self) -> RunPlace:
        return RunPlace(run_id=self.run_id, run_dir=self.run_dir)
