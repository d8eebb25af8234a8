"""Which runs a setup (a wizard state file) has prepared: `<state>.runs.jsonl`."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any, ClassVar

from .documents.setup import SetupRun
from .errors import UsageError
from .records import to_data
from .store import append_line, read_lines

SUFFIX = ".runs.jsonl"


def runs_file(state_path: Path) -> Path:
    """`<dir>/<stem>.runs.jsonl` for `<dir>/<stem>.json`."""
    state_path = Path(state_path)
    return state_path.with_name(state_path.stem + SUFFIX)


def launched_runs(state_path: Path) -> list[SetupRun]:
    """The runs prepared from this setup whose directory still exists, oldest first."""
    found = (SetupRun.of_line(line) for line in read_lines(runs_file(state_path)))
    return [run for run in found if run is not None and Path(run.run_dir).is_dir()]


def setup_runs(state_path: Path) -> list[dict[str, Any]]:
    """`launched_runs` as the lines of the runs file spell them."""
    return [run.dump() for run in launched_runs(state_path)]


def record_setup_run(state_path: Path, *, run_id: str, run_dir: Path, at: str) -> None:
    """Remember that this setup prepared `run_id` (leaving no `.lock` sidecar)."""
    line = SetupRun(at=at, run_id=run_id, run_dir=str(run_dir))
    append_line(runs_file(state_path), line.dump(), transient_lock=True)


class RelaunchRefused(UsageError):
    """The setup already prepared a run; another one needs `--again`."""

    FACTS: ClassVar[Collection[str]] = ("existing_run", "again")
    again = "--again"

    def __init__(self, state_path: Path, last: SetupRun) -> None:
        self.existing = last
        self.existing_run = to_data(last.place)
        run_dir = last.run_dir
        super().__init__(
            f"this setup already launched run {last.run_id} ({run_dir}); "
            "to launch another run of it, add --again; to continue that run: "
            f"okstra status {run_dir} / okstra attach {run_dir} / okstra resume {run_dir} --exec",
            path=state_path,
        )


def check_relaunch(state_path: Path, *, again: bool) -> None:
    """Refuse a second run of a setup unless `again` (`RelaunchRefused`)."""
    if again:
        return
    runs = launched_runs(state_path)
    if runs:
        raise RelaunchRefused(Path(state_path), runs[-1])
