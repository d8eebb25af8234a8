"""`okstra report`: a run's execution roles, and the check a final report must pass.

The final report's `executionRoles` is exactly the run manifest's role-execution set
: `okstra report roles <run>` prints that set as a markdown table,
`okstra report finalize <run> --data <final-report.json>` writes it (with each role
execution's recorded outcome) onto the report's data file, and
`okstra report check <run> <final-report.json>` refuses a report whose set differs.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, TypeGuard

from ..display import inert, status_label
from ..documents import RoleExecution, RunManifest
from ..documents.base import EXECUTION_IDENTITY_VERSION
from ..documents.run import Usage
from ..errors import DataFileError, OkstraError
from ..records import to_data
from ..store import atomic_write_bytes, decode_utf8, read_bytes, read_json
from ..tasks import RUN_MANIFEST
from .report_edit import set_keys
from .workers.usage import NOTHING, RoleUsage, RunUsage, total_of, usage_shown, usage_text

ROLE_FIELDS = (
    "roleExecutionRef",
    "role",
    "ordinal",
    "provider",
    "modelRef",
    "executionLabel",
    "status",
)


class ReportMismatch(OkstraError):
    """A final report's `executionRoles` is not the run manifest's role-execution set."""

    FACTS: ClassVar[Mapping[str, str]] = {
        "missing": "missing",
        "unexpected": "unexpected",
        "duplicated": "duplicated",
    }

    def __init__(
        self,
        path: Path,
        missing: Sequence[str],
        unexpected: Sequence[str],
        duplicated: Sequence[str],
    ) -> None:
        self.missing = list(missing)
        self.unexpected = list(unexpected)
        self.duplicated = list(duplicated)
        parts = []
        if self.missing:
            parts.append("missing " + ", ".join(self.missing))
        if self.unexpected:
            parts.append("not in the run manifest " + ", ".join(self.unexpected))
        if self.duplicated:
            parts.append("listed twice " + ", ".join(self.duplicated))
        super().__init__(
            "executionRoles must be exactly the run manifest's role executions: "
            + "; ".join(parts),
            path=path,
            field="executionRoles",
        )


def manifest_path(run: Path) -> Path:
    """The run manifest of `run` (a run directory or the manifest file itself)."""
    run = Path(run)
    return run / RUN_MANIFEST if run.is_dir() else run


def read_run_manifest(run: Path) -> tuple[Path, RunManifest]:
    """Read a run manifest through its model (the previous layout is upgraded).

    Raises:
        DataFileError: not JSON, not executionIdentityVersion 2, or a field of the
            wrong shape (named).
    """
    path = manifest_path(run)
    data = read_json(path, what="run manifest", follow=False)
    if not isinstance(data, dict):
        raise DataFileError("expected a JSON object (run manifest)", path=path)
    if data.get("executionIdentityVersion") != 2:
        raise DataFileError(
            f"expected executionIdentityVersion 2, got {data.get('executionIdentityVersion')!r}",
            path=path,
            field="executionIdentityVersion",
        )
    return path, RunManifest.parse(data, path=path)


def load_run_manifest(run: Path) -> tuple[Path, dict[str, Any]]:
    """The run manifest as a JSON object in this version's layout (see `read_run_manifest`)."""
    path, manifest = read_run_manifest(run)
    return path, manifest.dump()


def _ref_rows(value: object) -> TypeGuard[list[Mapping[str, Any]]]:
    """A list of objects, each with a string `roleExecutionRef`."""
    return isinstance(value, list) and all(
        isinstance(r, Mapping) and isinstance(r.get("roleExecutionRef"), str) for r in value
    )


def _row(manifest: RunManifest, execution: RoleExecution) -> dict[str, Any]:
    """One `executionRoles` row: the role execution, with the outcome its participant
    recorded (the lead's recorded end included) and, for a writer, its branch."""
    row = {k: execution.dump().get(k) for k in ROLE_FIELDS}
    participant = manifest.participant(execution.participant_ref)
    status = participant.status if participant is not None else execution.status
    exit_status = participant.exit_status if participant is not None else None
    signal = participant.exit_signal if participant is not None else None
    row["status"] = status
    row["outcome"] = status_label(status, exit_status, signal)
    row["exitStatus"] = exit_status
    if signal is not None:
        row["exitSignal"] = signal
    if execution.branch is not None:
        row["branch"] = execution.branch
        row["merged"] = execution.merged_at is not None
        if execution.merge_commit is not None:
            row["mergeCommit"] = execution.merge_commit
        if execution.discarded_at is not None:
            row["discarded"] = True
    if execution.turns:
        row["turns"] = len(execution.turns)
        # What its CLI reported its turns used, added up (null: nothing reported).
        row["usage"] = to_data(total_of(t.usage for t in execution.turns))
    return row


def execution_roles(manifest: RunManifest) -> list[dict[str, Any]]:
    """The manifest's role executions, projected to the report's `executionRoles` rows
    (each with its recorded outcome)."""
    return [_row(manifest, r) for r in manifest.role_executions]


def usage_totals(manifest: RunManifest) -> RunUsage:
    """What the run's workers reported they used: added up per role (in the manifest's
    order) and for the run; None where nothing was reported (the lead's own use is not
    read: its CLI is interactive)."""
    by_role: dict[str, list[Usage | None]] = {}
    for execution in manifest.role_executions:
        by_role.setdefault(execution.role, []).extend(t.usage for t in execution.turns or ())
    return RunUsage(
        by_role=tuple(RoleUsage(role=r, usage=total_of(u)) for r, u in by_role.items()),
        run=total_of(u for usages in by_role.values() for u in usages),
    )


def usage_cell(row: Mapping[str, Any]) -> str:
    """A row's usage as people read it: `—` for a role execution that reported none
    (or never ran a turn)."""
    return usage_shown(row.get("usage")) if row.get("turns") else NOTHING


def _cell(value: Any) -> str:
    """A markdown table cell: inert (control characters and newlines shown as escapes),
    its `|` escaped so it stays one cell."""
    return "" if value is None else inert(value).replace("|", "\\|")


def branch_cell(row: Mapping[str, Any]) -> str | None:
    """A writer's branch and what became of it: `<branch> (merged)`, `(not merged)`,
    `(discarded)`; None for a role execution without one."""
    branch = row.get("branch")
    if not isinstance(branch, str):
        return None
    if row.get("merged"):
        return f"{branch} (merged)"
    return f"{branch} (discarded)" if row.get("discarded") else f"{branch} (not merged)"


def roles_markdown(rows: Sequence[Mapping[str, Any]], run_usage: RunUsage | None = None) -> str:
    """A markdown table of execution roles (one row per role execution, manifest order),
    with the run's usage (`usage_totals`) last once a worker has run a turn."""
    lines = [
        "| Role execution | Role | # | Model | Label | Outcome | Branch | Usage |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            "| "
            + " | ".join(
                _cell(r.get(k))
                for k in (
                    "roleExecutionRef",
                    "role",
                    "ordinal",
                    "modelRef",
                    "executionLabel",
                    "outcome",
                )
            )
            + f" | {_cell(branch_cell(r))} | {_cell(usage_cell(r))} |"
        )
    if run_usage is not None and any(r.get("turns") for r in rows):
        lines.append(f"| Run total | | | | | | | {_cell(usage_text(run_usage.run))} |")
    return "\n".join(lines) + "\n"


def check_report(manifest: RunManifest, report_path: Path) -> list[dict[str, Any]]:
    """Refuse a final report whose `executionRoles` set differs from the manifest's.

    Returns:
        The manifest's execution roles (the set the report carries).

    Raises:
        DataFileError: the report is not a JSON object with an `executionRoles` list.
        ReportMismatch: the sets differ (listing missing, unexpected and duplicated refs).
    """
    expected = execution_roles(manifest)
    report = read_json(report_path, what="final report")
    if not isinstance(report, dict):
        raise DataFileError("expected a JSON object (final report)", path=report_path)
    got = report.get("executionRoles")
    if not _ref_rows(got):
        raise DataFileError(
            "expected a list of objects each with a roleExecutionRef",
            path=report_path,
            field="executionRoles",
        )
    want = [r["roleExecutionRef"] for r in expected]
    have = [r["roleExecutionRef"] for r in got]
    duplicated = sorted({ref for ref in have if have.count(ref) > 1})
    missing = [ref for ref in want if ref not in have]
    unexpected = [ref for ref in dict.fromkeys(have) if ref not in want]
    if missing or unexpected or duplicated:
        raise ReportMismatch(Path(report_path), missing, unexpected, duplicated)
    return expected


def finalize_report(manifest: RunManifest, report_path: Path) -> list[dict[str, Any]]:
    """Write `executionIdentityVersion: 2` and `executionRoles` onto a final report.

    The rows are the run manifest's role executions as recorded now (each with its
    `status`, the outcome okstra recorded). Every other byte of the report is kept
    (`report_edit.set_keys`); the two keys keep their place when present, else they
    are added at the end. The file is replaced atomically, with its permissions; a
    report that is not a JSON object (or a link, or not valid JSON, or nested deeper
    than okstra reads) is refused and left as it was.

    Returns:
        The rows written.

    Raises:
        DataFileError: the report is not a JSON object (named).
        FileSystemError: the report cannot be read or replaced.
    """
    path = Path(report_path)
    data = read_bytes(path, what="final report", follow=False)
    text = decode_utf8(data, path, error=DataFileError)
    rows = execution_roles(manifest)
    edited = set_keys(
        text,
        {"executionIdentityVersion": EXECUTION_IDENTITY_VERSION, "executionRoles": rows},
        path,
    )
    mode = stat.S_IMODE(os.stat(path, follow_symlinks=False).st_mode)
    atomic_write_bytes(path, edited.encode("utf-8"), mode=mode)
    return rows
