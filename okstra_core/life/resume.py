"""`okstra resume`: a run's resume sheet, finished once a pending session id is found.

A `discover` provider's id is looked up after an `exec` launch; only exactly one fitting
session is recorded (never guessed: `choose`); on a read-only project, with a note."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from .. import launch
from ..documents.run import RunManifest
from ..documents.task import SessionDiscovered
from ..environment import Environment
from ..errors import DataFileError, FileSystemError, OkstraError, StateInUseError, UsageError
from ..launch.mcp import server_for
from ..records import config, dataclass
from ..store import FileLock, append_line, check_no_links, lock_path_for
from ..tasks import LEAD_PROMPT, OKSTRA_DIR, TIMELINE
from ..trust import require_trusted
from . import index as runs_index
from .project import RUN_ARG, place_of
from .report import read_run_manifest

DEFAULT_WAIT = 3.0
# Concurrent `okstra resume` calls of one run take turns finishing its sheet.
_LOCK_TIMEOUT = 5.0


def project_of_run(run_dir: Path) -> Path:
    """The project a run directory belongs to; `FileSystemError` for a link on the way."""
    place = place_of(run_dir)
    if place is None:
        raise UsageError(
            f"not a run directory of a project (<project>/{OKSTRA_DIR}/tasks/<group>/<task>"
            f"/runs/<run>): {run_dir}",
            field=RUN_ARG,
        )
    check_no_links(place.root, run_dir)
    return place.root


def exec_command(outcome: ResumeOutcome, environment: Environment) -> launch.ResumeCommand:
    """The command `okstra resume --exec` runs for the lead: rebuilt from the catalog, the
    sheet giving only the session id and model (and agreeing, else `DataFileError`)."""
    lead = outcome.sheet.lead()
    if lead is None or lead.resume_argv is None:
        raise UsageError(
            "this run launched no lead CLI (the host session is the lead): there is nothing "
            "to exec",
            path=outcome.sheet.path,
        )
    # The exec path alone needs the catalog and the kickoff text: loaded here.
    from ..catalog.loaders import load_catalog
    from ..prepare.lead_prompt import KICKOFF

    project_root = project_of_run(outcome.run_dir)
    require_trusted(project_root, environment.env, doing="launch the lead")
    catalog = load_catalog(environment)
    try:
        provider = catalog.provider(lead.provider_id)
    except UsageError as exc:
        raise DataFileError(
            exc.message, path=outcome.sheet.path, field=f"{lead.participant}.provider"
        ) from None
    return launch.rebuild_resume_command(
        lead,
        provider,
        project_root=project_root,
        prompt_file=outcome.run_dir / LEAD_PROMPT,
        kickoff=KICKOFF,
        environment=environment,
        path=outcome.sheet.path,
        mcp=server_for(outcome.run_dir, launch.find_okstra(environment)),
    )


@dataclass(frozen=True)
class Lookup:
    """What the session lookup of one pending participant found (`resume --json`'s `lookups`)."""

    __pydantic_config__ = config(aliases={"chosen": "sessionId"})

    participant: str
    cli: str
    cwd: Path
    since: datetime | None
    candidates: tuple[str, ...]
    chosen: str | None
    problem: str | None


@dataclass(frozen=True)
class ResumeOutcome:
    """The run's resume sheet after `resume_run`, and what the lookup did (`resume --json`)."""

    __pydantic_config__ = config(
        camel_case=True,
        aliases={"pending_refs": "pending", "message": "error"},
        skip=("sheet",),
        views=("ok", "resume_sheet", "participants", "pending_refs", "message"),
        first=(
            *("ok", "run_id", "run_dir", "resume_sheet", "participants", "pending_refs"),
            "discovered",
        ),
        omit_none=("message",),
    )

    run_id: str
    run_dir: Path
    sheet: launch.ResumeSheet
    lookups: tuple[Lookup, ...]
    discovered: tuple[str, ...]  # participants whose id was found (and written) now
    notes: tuple[str, ...] = ()  # what could not be done (recording on a read-only project)

    @property
    def pending(self) -> tuple[launch.ResumeEntry, ...]:
        return self.sheet.pending

    @property
    def ok(self) -> bool:
        return not self.pending

    def message(self) -> str | None:
        """Why the sheet is still pending and what to do (None when nothing is)."""
        if not self.pending:
            return None
        problems = [lk.problem for lk in self.lookups if lk.problem]
        return "; ".join(problems) or f"the resume sheet is {launch.PENDING}"

    @property
    def resume_sheet(self) -> Path:
        return self.sheet.path

    @property
    def participants(self) -> list[dict[str, Any]]:
        return [e.to_document().dump() for e in self.sheet.entries]

    @property
    def pending_refs(self) -> list[str]:
        return [e.participant for e in self.pending]


def _parse_time(value: object, *, path: Path, field: str) -> datetime:
    if not isinstance(value, str):
        raise DataFileError("expected an ISO timestamp", path=path, field=field)
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise DataFileError(
            f"expected an ISO timestamp, got {value!r}", path=path, field=field
        ) from None
    if parsed.tzinfo is None:
        raise DataFileError("expected a timestamp with a UTC offset", path=path, field=field)
    return parsed


def launch_time(manifest: RunManifest, participant: str, *, path: Path) -> datetime:
    """When the participant's CLI was started: its `launchedAt`, else (`--launch none`,
    started by hand after prepare) the run's `createdAt`."""
    for index, item in enumerate(manifest.participants):
        if item.participant_ref == participant:
            if item.launched_at is not None:
                return _parse_time(
                    item.launched_at, path=path, field=f"participants[{index}].launchedAt"
                )
            break
    return _parse_time(manifest.created_at, path=path, field="createdAt")


def _look_up(
    entry: launch.ResumeEntry,
    run_arg: str,
    manifest: RunManifest,
    manifest_path: Path,
    environment: Environment,
    wait: float,
    choose: str | None,
    sleep: Callable[[float], None],
    clock: Callable[[], float],
) -> Lookup:
    since: datetime | None = None
    candidates: Sequence[str] = ()

    def lookup(problem: str | None, chosen: str | None = None) -> Lookup:
        return Lookup(
            entry.participant, entry.cli, entry.cwd, since, tuple(candidates), chosen, problem
        )

    prefix = f"{entry.participant}: the {entry.cli} session id is {launch.PENDING}"
    if entry.discover is None or entry.resume_template is None:
        return lookup(
            f"{prefix}, and this resume sheet does not record where {entry.cli} keeps its "
            f"sessions; resume it with the CLI's own session picker, started in {entry.cwd}"
        )
    since = launch_time(manifest, entry.participant, path=manifest_path)
    candidates = launch.discover_sessions(
        entry.discover,
        entry.cwd,
        since,
        environment,
        timeout=wait,
        source=launch.RESUME_JSON,
        sleep=sleep,
        clock=clock,
    )
    where = f"{entry.cli} recorded in {entry.cwd} since {since.isoformat()}"
    if choose is not None:
        if choose in candidates:
            return lookup(None, choose)
        listed = ", ".join(candidates) or "none"
        return lookup(f"{prefix}: --session-id {choose} is not a session {where} (found: {listed})")
    if len(candidates) == 1:
        return lookup(None, candidates[0])
    if not candidates:
        return lookup(
            f"{prefix}: no session {where} (looked for {wait:g} s); once the lead CLI has "
            f"started, run `okstra resume {run_arg}` again (or wait longer with --wait SECONDS)"
        )
    return lookup(
        f"{prefix}: {len(candidates)} sessions {where} ({', '.join(candidates)}); okstra does "
        f"not guess — pick the lead's with `okstra resume {run_arg} --session-id ID`"
    )


def _check_targets(run_dir: Path, manifest_path: Path) -> None:
    """Refuse (`FileSystemError`, never a note) a link on the way to what `_record` writes."""
    timeline = run_dir.parent.parent / TIMELINE
    root = project_of_run(run_dir)
    for target in (timeline, lock_path_for(timeline), manifest_path, run_dir / launch.RESUME_JSON,
                   lock_path_for(run_dir / launch.RESUME_JSON)):  # fmt: skip
        check_no_links(root, target)


def _record(
    run_dir: Path,
    run_id: str,
    manifest_path: Path,
    found: Mapping[str, str],
    environment: Environment,
) -> tuple[launch.ResumeSheet, tuple[str, ...]]:
    """Write the found ids (under the sheet's lock, re-read first); return the new sheet."""
    timeline = run_dir.parent.parent / TIMELINE
    with FileLock(run_dir / launch.RESUME_JSON, timeout=_LOCK_TIMEOUT):
        sheet = launch.read_resume_sheet(run_dir)
        written = [
            e.participant for e in sheet.entries if e.pending_discovery and e.participant in found
        ]
        if not written:
            # Another `okstra resume` finished the sheet first.
            return sheet, ()
        entries = _with_found(sheet, found).entries
        new = [e for e in entries if e.participant in written]
        # Everything that can refuse runs before the first write.
        launch.render_resume_sheet(entries, run_dir=run_dir, okstra=sheet.okstra)
        from ..prepare.runfiles import record_session_ref  # a writer: loaded when it writes

        now = environment.now().isoformat(timespec="seconds")
        for entry in new:
            if entry.session_id is not None:
                leader = entry.role == "leader"
                updated = record_session_ref(
                    manifest_path, entry.participant, entry.session_id, leader=leader
                )
                runs_index.note(run_dir, updated)
        launch.write_resume_sheet(run_dir, entries, okstra=sheet.okstra)
        for entry in new:
            discovered = SessionDiscovered(
                at=now,
                run_id=run_id,
                participant_ref=entry.participant,
                role=entry.role,
                provider=entry.provider_id,
                session_id=entry.session_id or "",
            )
            append_line(timeline, discovered.dump())
        return launch.read_resume_sheet(run_dir), tuple(written)


def resume_run(
    run_dir: Path,
    *,
    environment: Environment,
    wait: float = DEFAULT_WAIT,
    choose: str | None = None,
    run_arg: str | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> ResumeOutcome:
    """Read a run's resume sheet, looking up every pending session id first (`wait` seconds;
    `choose`: the id to take when several fit; `run_arg`: the run as the user named it)."""
    if wait < 0:
        raise UsageError("expected a number of seconds ≥ 0", field="--wait")
    manifest_path, manifest = read_run_manifest(run_dir)
    run_id = manifest.run_id
    if not (run_dir / launch.RESUME_JSON).exists():
        if manifest.entry_mode == "current-session":
            raise UsageError(
                "this run launched no lead CLI (the host session is the lead): "
                "there is nothing to resume",
                path=run_dir / launch.RESUME_JSON,
            )
        raise OkstraError("resume sheet not found", path=run_dir / launch.RESUME_JSON)
    sheet = launch.read_resume_sheet(run_dir)
    arg = run_arg or str(run_dir)
    lookups = tuple(
        _look_up(entry, arg, manifest, manifest_path, environment, wait, choose, sleep, clock)
        for entry in sheet.pending
    )
    if choose is not None and not lookups:
        raise UsageError(
            "--session-id only applies while a session id is pending discovery",
            field="--session-id",
        )
    found = {lk.participant: lk.chosen for lk in lookups if lk.chosen is not None}
    discovered: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    if found:
        sheet, discovered, notes = _record_or_note(
            sheet, run_dir, run_id, manifest_path, found, environment
        )
    return ResumeOutcome(run_id, run_dir, sheet, lookups, discovered, notes)


def _record_or_note(
    sheet: launch.ResumeSheet,
    run_dir: Path,
    run_id: str,
    manifest_path: Path,
    found: Mapping[str, str],
    environment: Environment,
) -> tuple[launch.ResumeSheet, tuple[str, ...], tuple[str, ...]]:
    """Record the ids found: the sheet, who was discovered, and a note when a refused write
    or a held lock kept them in memory (a link in the way is refused)."""
    _check_targets(run_dir, manifest_path)
    try:
        new, discovered = _record(run_dir, run_id, manifest_path, found, environment)
    except (FileSystemError, StateInUseError) as exc:
        note = f"the session ids found were not recorded: {exc.render()}"
        return _with_found(sheet, found), tuple(found), (note,)
    return new, discovered, ()


def _with_found(sheet: launch.ResumeSheet, found: Mapping[str, str]) -> launch.ResumeSheet:
    """`sheet` with the ids found filled in, in memory only."""
    entries = tuple(
        e.with_session(found[e.participant])
        if e.participant in found and e.pending_discovery
        else e
        for e in sheet.entries
    )
    return launch.ResumeSheet(path=sheet.path, entries=entries, okstra=sheet.okstra)
