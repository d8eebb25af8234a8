"""`okstra resume <run> [--wait S] [--session-id ID] [--exec] [--json]`.

Prints how to resume the run's lead (`--json`: its resume sheet), looking up a session id
still pending discovery first. `--exec` then runs the resumed lead as okstra's foreground
child — only with a known id and while the lead does not run; otherwise exit 1.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..display import inert
from ..errors import UsageError
from ..records import config, dataclass, to_data
from . import add_command, emit, run_lead, say

if TYPE_CHECKING:
    from ..life.resume import ResumeOutcome
    from ..life.status import LeadStatus


@dataclass(frozen=True, kw_only=True)
class ResumeReply:
    """`okstra resume --json`: the resume, notes, the lead's status, the next steps and,
    when `--exec` was refused, why (`error`, and `ok` false)."""

    __pydantic_config__ = config(
        camel_case=True,
        spread="outcome",
        skip=("refused",),
        views=("ok", "error"),
        first=("outcome", "ok", "notes", "lead", "next_steps"),
        omit_none=("error",),
    )

    outcome: ResumeOutcome
    notes: tuple[str, ...]
    lead: LeadStatus
    next_steps: tuple[str, ...]
    refused: str | None = None

    @property
    def ok(self) -> bool:
        return self.outcome.ok and self.refused is None

    @property
    def error(self) -> str | None:
        """Why `--exec` was refused, else why the sheet is still pending (None: neither)."""
        return self.refused or self.outcome.message()


def _seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise UsageError(f"expected a number of seconds, got {value!r}", field="--wait") from None
    if not seconds >= 0 or seconds == float("inf"):
        raise UsageError(f"expected a number of seconds ≥ 0, got {value!r}", field="--wait")
    return seconds


def register(sub: Any) -> None:
    """Add `resume` to the top-level parser."""
    from ..life.resume import DEFAULT_WAIT

    parser = add_command(
        sub, "resume",
        "how to resume a run's lead; find a pending session id; --exec resumes it",
        "okstra resume implementation-planning-001          how to resume this project's run",
        "okstra resume implementation-planning-001 --json   its resume sheet, as JSON",
        "okstra resume RUN_DIR --wait 0                      look for the session id once",
        "okstra resume implementation-planning-001 --exec   resume the lead in this terminal",
        description="Say how to resume a run's lead (and find a pending session id); "
        "--json prints the run's resume sheet.",
        args=(
            ("run", dict(help="a run id (e.g. planning-001), <task>/<run-id>, the run's "
                         "directory or its run-manifest.json")),
            ("--project-root", dict(default=".", help="a directory inside the project a run id "
                                    "is looked up in (default: the current directory; the "
                                    "project is found upwards from there)")),
            ("--wait", dict(type=_seconds, default=DEFAULT_WAIT, metavar="SECONDS",
                            help=f"how long to wait for a pending session id (default "
                            f"{DEFAULT_WAIT:g}; 0 = look once)")),
            ("--session-id", dict(help="when several sessions fit, the lead's (must be one "
                                  "that was found)")),
            ("--exec", dict(action="store_true", dest="exec_lead", help="then become the lead "
                            "CLI, resumed (only once its session id is known)")),
            ("--json", dict(action="store_true", help="print the resume sheet as JSON")),
        ),
    )  # fmt: skip
    parser.set_defaults(handler=_resume, human=_resume_human)


def _resume(ns: argparse.Namespace) -> tuple[ResumeReply, int]:
    from ..environment import Environment
    from ..life.lead import read_run
    from ..life.locate import locate_run
    from ..life.resume import exec_command, resume_run
    from ..life.runs import look
    from ..life.status import next_steps

    environment = Environment.real()
    run_dir = locate_run(ns.run, Path(ns.project_root), environment.env)
    # Looking at a run records its lead's exit, the first time it is seen (a note when
    # the project is read-only).
    lead_status, note = look(read_run(run_dir), environment)
    outcome = resume_run(
        run_dir,
        environment=environment,
        wait=ns.wait,
        choose=ns.session_id,
        run_arg=ns.run,
    )
    reply = ResumeReply(
        outcome=outcome,
        notes=outcome.notes if note is None else (note, *outcome.notes),
        lead=lead_status,
        # What can work for this run now (`life.status`), as `runs` and `status` offer it.
        next_steps=next_steps(read_run(run_dir), lead_status),
    )
    if ns.exec_lead and outcome.ok and lead_status.alive:
        where = lead_status.window_ref or f"pid {lead_status.process_id}"
        reply = replace(
            reply,
            refused=f"the lead of {ns.run} is still running ({lead_status.backend} {where}): "
            f"attach to it with `okstra attach {ns.run}`, or stop it first with "
            f"`okstra stop {ns.run}`",
        )
    if not reply.ok:
        if ns.exec_lead and ns.json:
            # The script of a pending sheet runs this: say it where a person looks too
            # (printed for people, the error goes there anyway).
            print(f"okstra: {inert(reply.error)}", file=sys.stderr)
        return reply, 1
    if ns.exec_lead:
        try:
            command = exec_command(outcome, environment)
        except UsageError as exc:
            return replace(reply, refused=exc.render()), 1
        # The lead runs with okstra's environment plus the provider's own variables.
        env = {**environment.env, **command.env}
        # The summary (`--json`: the document) first, then the resumed lead CLI.
        if ns.json:
            emit(to_data(reply))
        else:
            _resume_human(reply)
        run_lead(run_dir, list(command.argv), env, command.cwd, environment, resumed=True)
    return reply, 0


def _resume_human(reply: ResumeReply) -> None:
    """`okstra resume` for people: the run, its lead, and the exact command to resume."""
    from ..life.project import place_of

    run_dir = reply.outcome.run_dir
    place = place_of(Path(run_dir))
    lines = [f"run      {inert(place.ref if place else run_dir)}"]
    for entry in reply.outcome.sheet.entries:
        if entry.role != "leader":
            continue
        shown = entry.to_document()
        session = shown.session_id or "not known yet"
        lines.append(
            f"lead     {inert(shown.cli)} · {inert(shown.model)} · "
            f"session {inert(session)} ({inert(shown.status)})"
        )
    if reply.lead.label():
        lines.append(f"status   {inert(reply.lead.label())}")
    steps = reply.next_steps
    resume = [s for s in steps if s.startswith("okstra resume")]
    for step in resume:
        lines.append(f"resume   {inert(step)}")
    for step in steps:
        if step not in resume:
            lines.append(f"{step.split()[1]:<9}{inert(step)}")
    if not steps:
        lines.append("resume   nothing to resume now (see `okstra status`)")
    lines += [f"note     {inert(note)}" for note in reply.notes]
    say("\n".join(lines) + "\n")
    if reply.error:
        print(f"okstra: {inert(reply.error)}", file=sys.stderr)
