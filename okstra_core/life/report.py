"""`okstra report`: a run's execution roles, and the check a final report must pass.

A final report's `executionRoles` is exactly the run manifest's role-execution set:
`roles` prints it, `finalize` writes it onto the report, `check` refuses a difference.
Re-encoding would change big integers, decimals and escapes: the report is only checked as
JSON, then the two values replaced in place (`check_target` says where it may be)."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import orjson

from ..display import inert, status_label
from ..documents.base import EXECUTION_IDENTITY_VERSION
from ..documents.run import RoleExecution, RunManifest, Usage
from ..errors import DataFileError, OkstraError, UsageError
from ..paths import user_dirs
from ..records import RecordError, aliases_of, config, dataclass, fields_of, to_data, validate
from ..store import atomic_write_bytes, decode_utf8, json_kind, read_bytes, read_json
from ..tasks import OKSTRA_DIR, RUN_MANIFEST
from .workers.usage import (
    NOTHING,
    RoleUsage,
    RunUsage,
    UsageTotal,
    total_of,
    usage_shown,
    usage_text,
)

if TYPE_CHECKING:
    from pydantic import StrictStr


@dataclass(frozen=True, kw_only=True)
class TurnsUsed:
    """A role execution's turns, and what their CLI reported they used (None: nothing)."""

    __pydantic_config__ = config(camel_case=True)

    turns: int
    usage: UsageTotal | None


@dataclass(frozen=True, kw_only=True)
class RoleRow:
    """One `executionRoles` row: the role execution, its recorded outcome, a writer's branch."""

    __pydantic_config__ = config(
        camel_case=True,
        omit_none=("exit_signal", "branch", "merged", "merge_commit", "discarded"),
        spread="used",
    )

    role_execution_ref: str
    role: str
    ordinal: int
    provider: str
    model_ref: str | None
    execution_label: str
    status: str
    outcome: str
    exit_status: int | None
    exit_signal: int | None = None
    branch: str | None = None
    merged: bool | None = None
    merge_commit: str | None = None
    discarded: Literal[True] | None = None
    used: TurnsUsed | None = None


@dataclass(frozen=True, kw_only=True)
class ReportRoles:
    """What `finalize_report` writes onto a final report (its other keys are kept)."""

    __pydantic_config__ = config(camel_case=True)

    execution_identity_version: Literal[2] = EXECUTION_IDENTITY_VERSION
    execution_roles: tuple[RoleRow, ...]


@dataclass(frozen=True, kw_only=True)
class ListedRole:
    """A row of a final report's `executionRoles`, as the check reads it: its ref."""

    __pydantic_config__ = config(camel_case=True, extra="ignore")

    role_execution_ref: StrictStr


@dataclass(frozen=True, kw_only=True)
class ListedRoles:
    """A final report as the check reads it: the role executions it lists."""

    __pydantic_config__ = config(camel_case=True, extra="ignore")

    execution_roles: list[ListedRole]


@dataclass(frozen=True, kw_only=True)
class RolesReply:
    """`okstra report roles`: the run's execution roles, usage, table, and a report checked."""

    __pydantic_config__ = config(camel_case=True, omit_none=("report_checked",))

    ok: Literal[True] = True
    run_manifest: str
    execution_roles: tuple[RoleRow, ...]
    usage: RunUsage
    markdown: str
    report_checked: str | None = None


@dataclass(frozen=True, kw_only=True)
class ReportChecked:
    """`okstra report check`: the report lists exactly the run's role executions."""

    __pydantic_config__ = config(camel_case=True)

    ok: Literal[True] = True
    run_manifest: str
    report: str
    execution_roles: tuple[str, ...]


class ReportMismatch(OkstraError):
    """A final report's `executionRoles` is not the run manifest's role-execution set."""

    FACTS: ClassVar[Mapping[str, str]] = {k: k for k in ("missing", "unexpected", "duplicated")}

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
        named = (
            ("missing ", self.missing),
            ("not in the run manifest ", self.unexpected),
            ("listed twice ", self.duplicated),
        )
        parts = [what + ", ".join(refs) for what, refs in named if refs]
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

    Raises `DataFileError`: not JSON, not executionIdentityVersion 2, or a bad field."""
    path = manifest_path(run)
    data = read_json(path, what="run manifest", follow=False)
    if not isinstance(data, dict):
        raise DataFileError("expected a JSON object (run manifest)", path=path)
    # Checked before the manifest is read (its record takes a missing version for 2).
    key = aliases_of(RunManifest)["execution_identity_version"]
    version = data.get(key)
    if version != EXECUTION_IDENTITY_VERSION:
        raise DataFileError(f"expected {key} 2, got {version!r}", path=path, field=key)
    return path, RunManifest.parse(data, path=path)


def _row(manifest: RunManifest, execution: RoleExecution) -> RoleRow:
    participant = manifest.participant(execution.participant_ref)
    status = participant.status if participant is not None else execution.status
    exit_status = participant.exit_status if participant is not None else None
    signal = participant.exit_signal if participant is not None else None
    branch, turns = execution.branch, execution.turns
    used = TurnsUsed(turns=len(turns), usage=total_of(t.usage for t in turns)) if turns else None
    return RoleRow(
        **fields_of(execution, "role_execution_ref role ordinal provider"),
        **fields_of(execution, "model_ref execution_label"),
        status=status,
        outcome=status_label(status, exit_status, signal),
        exit_status=exit_status,
        exit_signal=signal,
        branch=branch,
        merged=None if branch is None else execution.merged_at is not None,
        merge_commit=None if branch is None else execution.merge_commit,
        discarded=True if branch is not None and execution.discarded_at is not None else None,
        used=used,
    )


def execution_roles(manifest: RunManifest) -> list[RoleRow]:
    """The manifest's role executions as the report's `executionRoles` rows."""
    return [_row(manifest, r) for r in manifest.role_executions]


def usage_totals(manifest: RunManifest) -> RunUsage:
    """What the run's workers (not the interactive lead) reported they used, per role and
    for the run (None: nothing)."""
    by_role: dict[str, list[Usage | None]] = {}
    for execution in manifest.role_executions:
        by_role.setdefault(execution.role, []).extend(t.usage for t in execution.turns or ())
    return RunUsage(
        by_role=tuple(RoleUsage(role=r, usage=total_of(u)) for r, u in by_role.items()),
        run=total_of(u for usages in by_role.values() for u in usages),
    )


def usage_cell(row: Mapping[str, Any]) -> str:
    """A row's usage (its JSON document) as people read it: `—` when it reported none."""
    return usage_shown(row.get("usage")) if row.get("turns") else NOTHING


def _cell(value: Any) -> str:
    """A markdown table cell: inert, its `|` escaped so it stays one cell."""
    return "" if value is None else inert(value).replace("|", "\\|")


def _branch_shown(branch: object, merged: object, discarded: object) -> str | None:
    if not isinstance(branch, str):
        return None
    if merged:
        return f"{branch} (merged)"
    return f"{branch} (discarded)" if discarded else f"{branch} (not merged)"


def branch_cell(row: Mapping[str, Any]) -> str | None:
    """A writer's branch (in a row's JSON document) and what became of it, else None."""
    return _branch_shown(row.get("branch"), row.get("merged"), row.get("discarded"))


def roles_markdown(rows: Sequence[RoleRow], run_usage: RunUsage | None = None) -> str:
    """A markdown table of execution roles, the run's usage last once a worker ran a turn."""
    lines = [
        "| Role execution | Role | # | Model | Label | Outcome | Branch | Usage |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        cells = (r.role_execution_ref, r.role, r.ordinal, r.model_ref, r.execution_label)
        branch = _branch_shown(r.branch, r.merged, r.discarded)
        usage = usage_text(r.used.usage) if r.used is not None else NOTHING
        lines.append(
            "| "
            + " | ".join(_cell(value) for value in (*cells, r.outcome))
            + f" | {_cell(branch)} | {_cell(usage)} |"
        )
    if run_usage is not None and any(r.used is not None for r in rows):
        lines.append(f"| Run total | | | | | | | {_cell(usage_text(run_usage.run))} |")
    return "\n".join(lines) + "\n"


def check_report(manifest: RunManifest, report_path: Path) -> list[RoleRow]:
    """Refuse (`ReportMismatch`, or `DataFileError` for a malformed report) a final report
    whose `executionRoles` set differs; return the manifest's."""
    expected = execution_roles(manifest)
    report = read_json(report_path, what="final report")
    if not isinstance(report, dict):
        raise DataFileError("expected a JSON object (final report)", path=report_path)
    try:
        listed = validate(ListedRoles, report)
    except RecordError:
        raise DataFileError(
            "expected a list of objects each with a roleExecutionRef",
            path=report_path,
            field="executionRoles",
        ) from None
    want = [r.role_execution_ref for r in expected]
    have = [r.role_execution_ref for r in listed.execution_roles]
    duplicated = sorted({ref for ref in have if have.count(ref) > 1})
    missing = [ref for ref in want if ref not in have]
    unexpected = [ref for ref in dict.fromkeys(have) if ref not in want]
    if missing or unexpected or duplicated:
        raise ReportMismatch(Path(report_path), missing, unexpected, duplicated)
    return expected


def finalize_report(manifest: RunManifest, report_path: Path) -> list[dict[str, Any]]:
    """Write `executionIdentityVersion: 2` and `executionRoles` onto a final report, every
    other byte kept, replaced atomically with its permissions; return the rows written."""
    path = Path(report_path)
    data = read_bytes(path, what="final report", follow=False)
    text = decode_utf8(data, path, error=DataFileError)
    written = ReportRoles(execution_roles=tuple(execution_roles(manifest)))
    edited = set_keys(text, to_data(written), path)
    mode = stat.S_IMODE(os.stat(path, follow_symlinks=False).st_mode)
    atomic_write_bytes(path, edited.encode("utf-8"), mode=mode)
    return [to_data(r) for r in written.execution_roles]


_WHITE = " \t\n\r"
_DECODER = json.JSONDecoder()


def _beside_the_run(real: Path, run_dir: Path | None) -> bool:
    """A report file directly in the run's own directory, named as a report."""
    if run_dir is None or real.parent != Path(os.path.realpath(run_dir)):
        return False
    return real.suffix == ".json" and "report" in real.name


def check_target(path: Path, env: Mapping[str, str], run_dir: Path | None = None) -> None:
    """Refuse (`UsageError`) a report path that is one of okstra's own files, before reading."""
    real = Path(os.path.realpath(path))
    if OKSTRA_DIR in real.parts and not _beside_the_run(real, run_dir):
        raise UsageError(
            f"{path} is inside a {OKSTRA_DIR} directory: okstra's own files are not a final "
            "report (give the report the lead wrote: outside .okstra, or a *report*.json in the "
            "run's own directory)",
            field="--data",
        )
    dirs = user_dirs(env)
    roots = [dirs.config, dirs.data, dirs.state, dirs.cache]
    if env.get("OKSTRA_HOME"):
        roots.append(Path(env["OKSTRA_HOME"]).expanduser())
    for root in roots:
        top = os.path.realpath(root)
        if str(real) == top or str(real).startswith(top.rstrip(os.sep) + os.sep):
            raise UsageError(
                f"{path} is inside okstra's own directory {root}: not a final report",
                field="--data",
            )


def _skip_white(text: str, at: int) -> int:
    while at < len(text) and text[at] in _WHITE:
        at += 1
    return at


def _members(text: str) -> tuple[list[tuple[str, int, int]], int]:
    """([(key, value start, value end)], index of the closing brace) of the top object."""
    at = _skip_white(text, 0) + 1  # past "{"
    members: list[tuple[str, int, int]] = []
    while True:
        at = _skip_white(text, at)
        if text[at] == "}":
            return members, at
        if text[at] == ",":
            at = _skip_white(text, at + 1)
        key, at = _DECODER.raw_decode(text, at)
        at = _skip_white(text, _skip_white(text, at) + 1)  # past ":"
        end = _DECODER.raw_decode(text, at)[1]  # where the value ends (valid JSON, read)
        members.append((str(key), at, end))
        at = end


def _encoded(value: Any) -> str:
    lines = orjson.dumps(value, option=orjson.OPT_INDENT_2).decode("utf-8").split("\n")
    return "\n".join([lines[0], *("  " + line for line in lines[1:])])


def set_keys(text: str, values: Mapping[str, Any], path: Path) -> str:
    """`text` (a JSON object) with `values` set in place or added at the end, every other
    byte kept. Raises `DataFileError` for invalid JSON, no object, or too deep a nesting."""
    try:
        parsed = json.loads(text)
    except RecursionError:
        raise DataFileError(
            "the final report is nested deeper than okstra reads: nothing was written", path=path
        ) from None
    except ValueError as exc:
        raise DataFileError(f"invalid JSON: {exc}: expected a final report", path=path) from None
    if not isinstance(parsed, dict):
        raise DataFileError(
            f"expected a JSON object (final report), got {json_kind(parsed)}", path=path
        )
    members, close = _members(text)
    pieces: list[str] = []
    done = 0
    for key, start, end in members:
        if key in values:
            pieces += [text[done:start], _encoded(values[key])]
            done = end
    present = {key for key, _, _ in members}
    added = [k for k in values if k not in present]
    if not added:
        return "".join([*pieces, text[done:]])
    last = members[-1][2] if members else close
    new = ",\n" if members else "\n"
    new += ",\n".join(f"  {orjson.dumps(k).decode()}: {_encoded(values[k])}" for k in added)
    tail = text[last:close].rstrip(_WHITE) if members else ""
    return "".join([*pieces, text[done:last], tail, new, "\n", text[close:]])
