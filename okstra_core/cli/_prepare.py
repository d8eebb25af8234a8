"""`okstra prepare` (a confirmed wizard state file, an answers file, or renderArgv flags)
and `okstra report`. Every way builds a request for `okstra_core.prepare`; one JSON
document is printed. With the exec backend okstra then runs the lead CLI as its
foreground child, records its exit and exits with its status.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..compat.flags import add_legacy_arguments, apply_legacy_inputs, legacy_flags_given
from ..environment import Environment
from ..errors import UsageError
from ..records import to_data
from . import RUN_ARG, TABLE_JSON, add_command, emit, json_flag, run_dir, run_lead
from ._app import LAUNCH_CHOICES
from ._human import render_markdown, render_report_roles
from .roleargs import (
    REQUEST_DESTS,
    add_request_arguments,
    has_request_flags,
    request_from_namespace,
)

if TYPE_CHECKING:
    from ..life.report import ReportChecked

PREPARE_EXAMPLES = """\
examples:
  okstra prepare --state 20260115-093000 --dry-run   every file and command; writes nothing
  okstra prepare --state 20260115-093000             prepare and launch (auto backend)
  okstra prepare --state 20260115-093000 --launch none
  okstra prepare --answers answers.json --project-root . --launch none
      replay a whole setup (`okstra wizard answers`) and prepare it, in one process
  okstra prepare --project-root . --task-group web --task-id login \\
      --task-type implementation-planning --brief docs/login.md \\
      --role-count planner=2 --role-model planner=claude/opus-4.6

Prints one JSON document. `okstra wizard outcome --state F` gives the renderArgv a
confirmed wizard would pass here.
"""


def register(sub: Any) -> None:
    """Add `prepare` and `report` to the top-level parser."""
    prep = add_command(
        sub, "prepare",
        "turn a confirmed wizard (or its renderArgv) into a run and launch the lead",
        description="Validate the inputs, resolve the team, write the run's files and "
        "launch the lead session.",
        epilog=PREPARE_EXAMPLES,
        args=(
            ("--state", dict(metavar="FILE", help="a confirmed wizard state file (a bare "
                             "name: in the wizards dir)")),
            ("--answers", dict(metavar="FILE", help="replay an answers file (`okstra wizard "
                               "answers`) into a new setup and prepare it; with --project-root "
                               "(and optionally --host, --entry-mode, --task-type, --state)")),
            ("--again", dict(action="store_true", help="with --state: launch another run of "
                             "a setup that already launched one")),
            ("--launch", dict(choices=LAUNCH_CHOICES, default="auto",
                              help="how to start the lead (auto = tmux inside tmux, else exec)")),
            ("--dry-run", dict(action="store_true",
                               help="print every file and command; write nothing")),
            ("--no-mcp", dict(dest="mcp", action="store_false", default=None,
                              help="do not give the lead okstra's MCP tools (it drives its team "
                              "with shell commands only); default: the user config's `mcp` "
                              "(true)")),
        ),
    )  # fmt: skip
    add_request_arguments(prep)
    add_legacy_arguments(prep)  # the earlier okstra's flags, hidden (docs/compatibility.md)
    prep.set_defaults(handler=_prepare)
    report = add_command(
        sub, "report", "execution roles of a prepared run",
        "okstra report roles .okstra/tasks/web/login/runs/implementation-planning-001",
        "okstra report roles RUN --markdown          the table for a report",
        "okstra report check RUN final-report.json   exit 2 unless the sets match",
        description="The role executions of a run, and the check a final report must pass.",
    )  # fmt: skip
    rsub = report.add_subparsers(
        dest="report_command", metavar="COMMAND", parser_class=type(report)
    )
    roles = add_command(
        rsub, "roles", "the run's execution roles (a table; --markdown, --json)",
        "okstra report roles .okstra/tasks/web/login/runs/implementation-planning-001",
        "okstra report roles RUN --markdown   the markdown table for a final report",
        "okstra report roles RUN --json",
        "okstra report roles RUN --report final-report.json",
        args=(
            RUN_ARG,
            ("--report", dict(metavar="FILE",
                              help="also check this final-report JSON against the run")),
            ("--markdown", dict(action="store_const", const=render_markdown, dest="human",
                                help="print the markdown table (for a final report) instead")),
        ),
    )  # fmt: skip
    json_flag(roles, _report_roles, render_report_roles, TABLE_JSON)
    add_command(
        rsub, "check", "refuse a final report whose executionRoles differ",
        "okstra report check RUN final-report.json   exit 2 unless the role sets match",
        "okstra report check .okstra/tasks/web/login/runs/implementation-001 report.json",
        args=(RUN_ARG, ("report", dict(help="the final report JSON (with executionRoles)"))),
    ).set_defaults(handler=_report_check)  # fmt: skip
    add_command(
        rsub, "finalize",
        "write the run's executionRoles (with their outcomes) onto a final report",
        "okstra report finalize RUN --data final-report.json",
        "okstra report finalize perf/widget/implementation-001 --data report.json",
        description="Write executionIdentityVersion 2 and executionRoles — every role "
        "execution of the run manifest with its recorded status — onto a final report's "
        "JSON data file, atomically, keeping its other keys. `okstra report check` then "
        "passes.",
        args=(RUN_ARG, ("--data", dict(metavar="FILE", required=True,
                                   help="the final report's JSON data file"))),
    ).set_defaults(handler=_report_finalize)  # fmt: skip


def _emit_progress(step: str) -> None:
    # Progress goes to stderr: stdout carries exactly one JSON document.
    if os.environ.get("OKSTRA_PROGRESS") == "1":
        print(f"okstra: {step}", file=sys.stderr, flush=True)


# The lead started, then exited while okstra watched its start (its end is recorded).
LEAD_EXITED = 3


def _prepare(ns: argparse.Namespace) -> tuple[dict[str, Any], int]:
    from ..prepare import prepare

    environment = Environment.real()
    if ns.answers:
        result = _prepare_answers(ns, environment, _launching(ns, environment))
    elif ns.state:
        if has_request_flags(ns) or legacy_flags_given(ns):
            raise UsageError("okstra prepare: give either --state or the input flags, not both")
        from ..frontend import prepare_setup  # the wizard loads only for --state
        from ..session import resolve_state_path

        path = resolve_state_path(ns.state, environment)
        result = prepare_setup(path, again=ns.again, **_launching(ns, environment))
    else:
        if ns.again:
            raise UsageError("okstra prepare: --again applies to --state", field="--again")
        # The earlier okstra's flags and OKSTRA_DEFAULT_* become request flags first.
        for note in apply_legacy_inputs(ns, environment):
            print(note, file=sys.stderr, flush=True)
        if not has_request_flags(ns):
            raise UsageError("okstra prepare: give --state F or the renderArgv flags")
        result = prepare(request_from_namespace(ns, environment), **_launching(ns, environment))
        from ..frontend import record_lead_exit

        record_lead_exit(result, environment)
    payload: dict[str, Any] = to_data(result)
    if result.ok and result.exec_argv:
        emit(payload)  # the JSON document first, then the lead CLI in the foreground
        cwd = result.launch.cwd if result.launch is not None else Path.cwd()
        env = dict(result.exec_env) if result.exec_env is not None else dict(os.environ)
        run_lead(result.run_dir, list(result.exec_argv), env, cwd, environment)
    if result.lead_exited:
        print(f"okstra: {result.error}", file=sys.stderr, flush=True)
        return payload, LEAD_EXITED
    return payload, 0 if result.ok else 1


# With --answers, the request flags that describe a new setup (as `wizard init` takes
# them); the others come from the answers.
_SETUP_FLAGS = ("project_root", "host", "entry_mode", "task_type")


def _launching(ns: argparse.Namespace, environment: Environment) -> dict[str, Any]:
    """How every way of preparing launches, from the flags."""
    return {
        "launch": ns.launch,
        "dry_run": ns.dry_run,
        "environment": environment,
        "on_step": _emit_progress,
        "mcp": ns.mcp,
    }


def _prepare_answers(
    ns: argparse.Namespace, environment: Environment, launching: dict[str, Any]
) -> Any:
    """`prepare --answers FILE`: replay into a new setup (confirmed, else nothing written)."""
    from ..frontend import prepare_replayed
    from ..session import Wizard, resolve_state_path
    from ._wizard import read_answers

    extra = [d for d in REQUEST_DESTS if d not in _SETUP_FLAGS and getattr(ns, d, None)]
    if extra or legacy_flags_given(ns):
        raise UsageError(
            "okstra prepare: --answers takes only --project-root, --host, --entry-mode, "
            "--task-type and --state; the rest comes from the answers",
            field="--" + extra[0].replace("_", "-") if extra else "--answers",
        )
    if ns.again:
        raise UsageError("okstra prepare: --again applies to --state", field="--again")
    if not ns.project_root:
        raise UsageError("okstra prepare: --answers needs --project-root", field="--project-root")
    answers_path = Path(ns.answers).expanduser()
    entries = read_answers(ns.answers)
    state = resolve_state_path(ns.state, environment) if ns.state else None
    wizard, replayed = Wizard.replay_new(
        state,
        ns.project_root,
        entries,
        host=ns.host or None,
        entry_mode=ns.entry_mode or None,
        task_type=ns.task_type or None,
        environment=environment,
    )
    if replayed.error is not None:
        index = replayed.index or 0
        raise UsageError(
            f"answers[{index}] ({entries[index].step}): {replayed.error}; nothing was written",
            path=answers_path,
            field=f"[{index}]",
        )
    done = wizard.state
    if done.aborted or done.confirmed is not True:
        stop = "abort the setup" if done.aborted else f"stop at step {replayed.next.id}"
        raise UsageError(
            f"the answers {stop}, before the setup is confirmed; nothing was written",
            path=answers_path,
            field=f"[{len(entries)}]",
        )
    return prepare_replayed(wizard, **launching)


def _report_roles(ns: argparse.Namespace) -> tuple[dict[str, Any], int]:
    from ..life.report import (
        RolesReply,
        check_report,
        execution_roles,
        read_run_manifest,
        roles_markdown,
        usage_totals,
    )

    path, manifest = read_run_manifest(run_dir(ns.run))
    rows = execution_roles(manifest)
    usage = usage_totals(manifest)
    if ns.report:
        check_report(manifest, Path(ns.report))
    reply = RolesReply(
        run_manifest=str(path),
        execution_roles=tuple(rows),
        usage=usage,
        markdown=roles_markdown(rows, usage),
        report_checked=str(ns.report) if ns.report else None,
    )
    # Printed for people from its JSON document (`_human.render_report_roles`).
    return to_data(reply), 0


def _report_check(ns: argparse.Namespace) -> tuple[ReportChecked, int]:
    from ..life.report import ReportChecked, check_report, read_run_manifest

    path, manifest = read_run_manifest(run_dir(ns.run))
    rows = check_report(manifest, Path(ns.report))
    return ReportChecked(
        run_manifest=str(path),
        report=str(ns.report),
        execution_roles=tuple(r.role_execution_ref for r in rows),
    ), 0


def _report_finalize(ns: argparse.Namespace) -> tuple[dict[str, Any], int]:
    from ..life.actions import report_finalize

    return to_data(report_finalize(run_dir(ns.run), Path(ns.data))), 0
