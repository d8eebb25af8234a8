"""`okstra runs|status|attach|stop`: the runs of this project and the life of their lead.

Each prints for people by default (a table, a few lines) and one JSON document with
`--json`. A run is named by id, `<task>/<run-id>` or path, from anywhere inside the
project. Looking at a run records its lead's exit the first time it is seen.
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from ..errors import OkstraError, UsageError

RUN_HELP = "a run id (e.g. planning-001), <task>/<run-id>, or the run's directory"


def _print(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def _json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON document")


def _seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise UsageError(f"expected a number of seconds, got {value!r}", field="--grace") from None
    if not 0 <= seconds < 3600:
        raise UsageError(f"expected seconds in [0, 3600), got {value!r}", field="--grace")
    return seconds


def register(sub: Any) -> None:
    """Add `runs`, `status`, `attach` and `stop` to the top-level parser."""
    runs = sub.add_parser(
        "runs",
        help="this project's runs and their lead's status, newest first",
        epilog="examples:\n"
        "  okstra runs               this project's runs, newest first\n"
        "  okstra runs --all         every project's runs\n"
        "  okstra runs --json | jq '.runs[0]'",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    runs.add_argument("--all", action="store_true", help="every project's runs (central index)")
    runs.add_argument(
        "--project-root",
        default=".",
        help="a directory inside the project (default: the current directory)",
    )
    _json_flag(runs)
    runs.set_defaults(handler=_runs, human=_runs_human)

    status = sub.add_parser(
        "status",
        help="a run and its lead: running, exited N, …",
        epilog="examples:\n"
        "  okstra status requirements-discovery-001\n"
        "  okstra status perf/widget          the task's newest run\n"
        "  okstra status perf/widget --json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    status.add_argument("run", help=RUN_HELP)
    _json_flag(status)
    status.set_defaults(handler=_status, human=_status_human)

    attach = sub.add_parser(
        "attach",
        help="show the lead's tmux window, or a worker's pane (switch-client inside tmux, "
        "else attach)",
        epilog="examples:\n  okstra attach requirements-discovery-001\n  okstra attach perf/widget",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    attach.add_argument("run", help=RUN_HELP)
    attach.add_argument("who", nargs="?", help="a worker's pane instead (e.g. analyser#1)")
    attach.set_defaults(handler=_attach, human=_attach_human)

    stop = sub.add_parser(
        "stop",
        help="ask the lead to stop (Ctrl-C, SIGTERM), then kill it after --grace",
        epilog="examples:\n  okstra stop requirements-discovery-001\n"
        "  okstra stop perf/widget --grace 30",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    stop.add_argument("run", help=RUN_HELP)
    stop.add_argument(
        "--grace",
        type=_seconds,
        default=10.0,
        metavar="SECONDS",
        help="how long the lead gets to stop before it is killed (default 10)",
    )
    _json_flag(stop)
    stop.set_defaults(handler=_stop, human=_stop_human)


# --------------------------------------------------------------------------- runs


def _runs(ns: argparse.Namespace) -> tuple[dict[str, Any], int]:
    from ..environment import Environment
    from ..life.runs import all_runs, project_root_or_error, project_runs

    environment = Environment.real()
    now = environment.now()
    if ns.all:
        rows = all_runs(environment)
        root = None
    else:
        try:
            root = project_root_or_error(Path(ns.project_root))
        except OkstraError as exc:
            raise UsageError(
                f"{exc.message}; `okstra runs --all` lists every project's runs"
            ) from None
        rows = project_runs(root, environment)
    listed = [row.to_json(now) for row in rows]
    for row, shown in zip(rows, listed, strict=True):
        alive = row.lead is not None and row.lead.alive and row.info is not None
        shown["activity"] = _activity(row.info, row.lead, environment) if alive else None
    return {
        "ok": True,
        "all": bool(ns.all),
        "projectRoot": str(root) if root else None,
        "runs": listed,
    }, 0


def _table(headers: list[str], rows: list[list[str]]) -> str:
    from rich import box
    from rich.console import Console
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for header in headers:
        table.add_column(header, overflow="fold")
    for row in rows:
        table.add_row(*row)
    buffer = io.StringIO()
    tty = sys.stdout.isatty()
    width = shutil.get_terminal_size((120, 24)).columns if tty else 160
    Console(file=buffer, width=width, no_color=not tty, highlight=False).print(table)
    return buffer.getvalue()


def _runs_human(payload: dict[str, Any]) -> None:
    _print(_runs_human_text(payload))


def _runs_human_text(payload: dict[str, Any]) -> str:
    from ..life.runs import human_age

    runs = payload["runs"]
    if not runs:
        where = "any project" if payload["all"] else f"this project ({payload['projectRoot']})"
        return f"no runs in {where}\n"
    headers = ["RUN", "TASK", "TYPE", "TEAM", "BACKEND", "LEAD", "AGE"]
    if payload["all"]:
        headers.append("PROJECT")
    rows = []
    for run in runs:
        row = [
            run["runId"],
            run["taskKey"],
            run["taskType"],
            str(run["teamSize"]) if run["teamSize"] is not None else "?",
            run["backend"] or "-",
            (run["leadStatus"] + (f" ({run['activity']})" if run.get("activity") else ""))
            if run["problem"] is None
            else f"damaged ({run['problem']})",
            human_age(run["ageSeconds"]),
        ]
        if payload["all"]:
            row.append(run["projectRoot"] or "?")
        rows.append(row)
    return _table(headers, rows)


# --------------------------------------------------------------------------- status


def _last_exit_event(timeline: Path, run_id: str) -> dict[str, Any] | None:
    from ..store import read_lines

    last = None
    for record in read_lines(timeline):
        if (
            isinstance(record, dict)
            and record.get("runId") == run_id
            and record.get("event") == "lead-exited"
        ):
            last = record
    return last


def _status(ns: argparse.Namespace) -> tuple[dict[str, Any], int]:
    from ..environment import Environment
    from ..life.lead import observe, read_run, resume_command
    from ..life.runs import locate_run

    environment = Environment.real()
    run = read_run(locate_run(ns.run, Path.cwd()))
    lead = observe(run, environment)
    event = _last_exit_event(run.timeline, run.run_id) if lead.ended else None
    team = _team(run.run_dir, environment)
    activity = _activity(run, lead, environment)
    return {
        "ok": True,
        "runId": run.run_id,
        "run": run.ref,
        "runDir": str(run.run_dir),
        "projectRoot": str(run.project_root) if run.project_root else None,
        "taskKey": run.task_key,
        "taskType": run.task_type,
        "teamSize": run.team_size,
        "createdAt": run.created_at.isoformat() if run.created_at else None,
        "lead": lead.to_json(),
        "leadStatus": lead.label(),
        "activity": activity,
        "lastLines": list(event.get("lastLines") or []) if event else [],
        "resumeCommand": resume_command(run),
        "workers": team,
    }, 0


def _activity(run: Any, lead: Any, environment: Any) -> str | None:
    """`running`, `waiting for input` or `idle` of a lead that runs in tmux."""
    from ..life.activity import lead_activity

    seen = lead_activity(run.run_dir, run.leader, environment) if lead.alive else None
    return seen.state if seen is not None else None


def _team(run_dir: Path, environment: Any) -> list[dict[str, Any]]:
    """The run's workers (`okstra worker status`): a look records ends nobody saw."""
    from ..life.workers.observe import as_data, observe_team

    return [w for w in as_data(observe_team(run_dir, environment)) if not w["leader"]]


def _status_human(payload: dict[str, Any]) -> None:
    _print(_status_human_text(payload))


def _status_human_text(payload: dict[str, Any]) -> str:
    lead = payload["lead"]
    where = lead["windowRef"] or (f"pid {lead['processId']}" if lead["processId"] else None)
    lines = [
        f"run      {payload['run']}  ({payload['taskType']}, team of {payload['teamSize']})",
        f"lead     {payload['leadStatus']}"
        + (f" ({payload['activity']})" if payload.get("activity") else "")
        + (f" — {lead['backend']}" if lead["backend"] else "")
        + (f" {where}" if where else ""),
    ]
    if lead["sessionId"]:
        lines.append(f"session  {lead['sessionId']}")
    if lead["exitedAt"]:
        lines.append(f"ended    {lead['exitedAt']}")
    if lead["detail"]:
        lines.append(f"note     {lead['detail']}")
    lines.append(f"dir      {payload['runDir']}")
    lines.append(f"resume   {payload['resumeCommand']}")
    if payload.get("workers"):
        from ..display import inert

        for worker in payload["workers"]:
            shown = f"{worker['short']}  {worker['status']}  {worker['modelRef'] or ''}"
            lines.append(f"worker   {inert(shown)}")
    if payload["lastLines"]:
        lines.append("last lines of its window:")
        lines += [f"  | {line}" for line in payload["lastLines"]]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- attach


def _attach(ns: argparse.Namespace) -> tuple[dict[str, Any], int]:
    from ..environment import Environment
    from ..life.lead import plan_attach, read_run
    from ..life.runs import locate_run

    environment = Environment.real()
    if ns.who:
        return _attach_worker(ns, environment)
    run = read_run(locate_run(ns.run, Path.cwd()))
    plan = plan_attach(run, environment)
    payload = plan.to_json()
    if plan.argv is None:
        return payload, 1
    if plan.switch:
        done = subprocess.run(list(plan.argv), capture_output=True, text=True, check=False)
        if done.returncode != 0:
            payload.update(ok=False, error=f"tmux: {done.stderr.strip()}")
            return payload, 1
        return payload, 0
    # Outside tmux: this terminal becomes a tmux client of the lead's session.
    try:
        os.execvpe(plan.argv[0], list(plan.argv), dict(plan.env or os.environ))
    except OSError as exc:
        payload.update(ok=False, error=f"could not run tmux: {exc.strerror or exc}")
    return payload, 1


def _attach_worker(ns: argparse.Namespace, environment: Any) -> tuple[dict[str, Any], int]:
    from ..life.runs import locate_run
    from ..life.workers.control import attach_target

    target = attach_target(locate_run(ns.run, Path.cwd()), ns.who, environment)
    payload: dict[str, Any] = {"ok": True, "worker": target.label, "command": list(target.argv)}
    if target.switch:
        done = subprocess.run(
            list(target.argv), env=target.env, capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            payload.update(ok=False, error=f"tmux: {done.stderr.strip()}")
            return payload, 1
        return payload, 0
    try:
        os.execvpe(target.argv[0], list(target.argv), target.env)
    except OSError as exc:
        payload.update(ok=False, error=f"could not run tmux: {exc.strerror or exc}")
    return payload, 1


def _attach_human(payload: dict[str, Any]) -> None:
    _print(_attach_human_text(payload))


def _attach_human_text(payload: dict[str, Any]) -> str:
    if payload.get("error"):
        print(f"okstra: {payload['error']}", file=sys.stderr)
        return ""
    if "worker" in payload:
        from ..display import inert

        return f"okstra: switched to {inert(payload['worker'])}\n"
    return f"okstra: switched to the lead of {payload['run']} ({payload['lead']['label']})\n"


# --------------------------------------------------------------------------- stop


def _stop(ns: argparse.Namespace) -> tuple[dict[str, Any], int]:
    from ..environment import Environment
    from ..life.lead import read_run, stop
    from ..life.runs import locate_run

    environment = Environment.real()
    run = read_run(locate_run(ns.run, Path.cwd()))
    outcome = stop(run, environment, grace=ns.grace)
    payload = outcome.to_json()
    return payload, 0 if payload["ok"] else 1


def _stop_human(payload: dict[str, Any]) -> None:
    _print(_stop_human_text(payload))


def _stop_human_text(payload: dict[str, Any]) -> str:
    lead = payload["lead"]
    if not payload["wasRunning"]:
        return f"okstra: the lead of {payload['run']} is not running ({lead['label']})\n"
    if not payload["ok"]:
        return f"okstra: the lead of {payload['run']} is still running ({lead['label']})\n"
    steps = ", ".join(payload["steps"])
    return (
        f"okstra: stopped the lead of {payload['run']} ({lead['label']}): {steps}\n"
        f"okstra: to resume it: {payload['resumeCommand']}\n"
    )
