"""The inputs of a prepare, and their argv form (SPEC §6.6, §8).

`okstra prepare <renderArgv…>` takes exactly the argv the wizard's outcome
produces; `PrepareInputs.to_argv()` goes the other way, so a run's input snapshot
(`run-inputs.json`) can be replayed verbatim.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import orjson

from ..catalog.models import TASK_TYPES
from ..errors import UsageError

ENTRY_MODES = ("spawn-process", "current-session")


@dataclass(frozen=True)
class PrepareInputs:
    """Everything `prepare` needs, before anything is resolved.

    Attributes:
        project_root: the project's directory (absolute).
        task_group: the task's group segment (already slugified by the wizard).
        task_id: the task's id segment.
        task_type: the phase of work (one of `TASK_TYPES`).
        brief: the brief file as given (relative to the project root, or absolute).
        approved_plan: the approved plan file, for stage-scoped task types.
        directive: free text for the lead.
        related_tasks: comma-separated task keys.
        host: host runtime id ("" = detect).
        entry_mode: "spawn-process" | "current-session" ("" = spawn-process).
        role_counts: raw `role=N` values, in the order given.
        role_models: raw `role=model_ref` values, in the order given.
        host_session_context_json: raw JSON object describing the host session.
    """

    project_root: Path
    task_group: str
    task_id: str
    task_type: str
    brief: str
    approved_plan: str = ""
    directive: str = ""
    related_tasks: str = ""
    host: str = ""
    entry_mode: str = ""
    role_counts: tuple[str, ...] = ()
    role_models: tuple[str, ...] = ()
    host_session_context_json: str = ""

    @property
    def task_key(self) -> str:
        return f"{self.task_group}/{self.task_id}"

    @property
    def effective_entry_mode(self) -> str:
        return self.entry_mode or "spawn-process"

    def host_session_context(self) -> dict[str, Any]:
        """The parsed host session context (an empty dict when none was given)."""
        return parse_host_session_context(self.host_session_context_json)

    def related_task_keys(self) -> list[str]:
        return [t.strip() for t in self.related_tasks.split(",") if t.strip()]

    def to_argv(self) -> list[str]:
        """The canonical argv that reproduces these inputs (`okstra prepare …`)."""
        argv = [
            "--project-root",
            str(self.project_root),
            "--task-group",
            self.task_group,
            "--task-id",
            self.task_id,
            "--task-type",
            self.task_type,
            "--brief",
            self.brief,
        ]
        for flag, value in (
            ("--approved-plan", self.approved_plan),
            ("--directive", self.directive),
            ("--related-tasks", self.related_tasks),
            ("--host", self.host),
            ("--entry-mode", self.entry_mode),
        ):
            if value:
                argv += [flag, value]
        for raw in self.role_counts:
            argv += ["--role-count", raw]
        for raw in self.role_models:
            argv += ["--role-model", raw]
        if self.host_session_context_json:
            argv += ["--host-session-context-json", self.host_session_context_json]
        return argv

    def to_json(self) -> dict[str, Any]:
        """The input snapshot written to `run-inputs.json` (camelCase)."""
        return {
            "projectRoot": str(self.project_root),
            "taskGroup": self.task_group,
            "taskId": self.task_id,
            "taskType": self.task_type,
            "brief": self.brief,
            "approvedPlan": self.approved_plan,
            "directive": self.directive,
            "relatedTasks": self.related_tasks,
            "host": self.host,
            "entryMode": self.entry_mode,
            "roleCounts": list(self.role_counts),
            "roleModels": list(self.role_models),
            "hostSessionContext": self.host_session_context(),
            "argv": self.to_argv(),
        }


def parse_host_session_context(raw: str) -> dict[str, Any]:
    """Parse `--host-session-context-json`; it must be a JSON object."""
    if not raw.strip():
        return {}
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise UsageError(
            f"invalid JSON ({exc}): expected a JSON object", field="--host-session-context-json"
        ) from None
    if not isinstance(value, dict):
        raise UsageError(
            f"expected a JSON object, got {type(value).__name__}",
            field="--host-session-context-json",
        )
    return value


class _RaisingParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"okstra prepare: {message}")


def add_input_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the renderArgv flags to `parser` (shared by the CLI and `parse_argv`)."""
    add = parser.add_argument
    add("--project-root", dest="project_root", metavar="DIR", help="the project directory")
    add("--task-group", dest="task_group", metavar="GROUP", help="the task's group (slug)")
    add("--task-id", dest="task_id", metavar="ID", help="the task's id within its group (slug)")
    add(
        "--task-type",
        dest="task_type",
        metavar="TYPE",
        help="the phase, e.g. implementation-planning",
    )
    add("--brief", dest="brief", metavar="FILE", help="the brief, relative to the project")
    add(
        "--approved-plan",
        dest="approved_plan",
        default="",
        metavar="FILE",
        help="the approved plan (implementation and final-verification)",
    )
    add("--directive", dest="directive", default="", metavar="TEXT", help="text for the lead")
    add(
        "--related-tasks",
        dest="related_tasks",
        default="",
        metavar="KEYS",
        help="comma-separated task keys (group/id) the lead should read",
    )
    add(
        "--host",
        dest="host",
        default="",
        metavar="ID",
        help="host runtime: claude-code, codex or terminal (default: detected)",
    )
    add(
        "--entry-mode",
        dest="entry_mode",
        default="",
        metavar="MODE",
        help="spawn-process (default) or current-session",
    )
    add(
        "--role-count",
        dest="role_counts",
        action="append",
        default=[],
        metavar="ROLE=N",
        help="instances of an adjustable or optional role (repeatable)",
    )
    add(
        "--role-model",
        dest="role_models",
        action="append",
        default=[],
        metavar="ROLE=MODEL",
        help="the model of a role's next instance, e.g. analyser=claude/opus-4.6 (repeatable)",
    )
    add(
        "--host-session-context-json",
        dest="host_session_context_json",
        default="",
        metavar="JSON",
        help="a JSON object describing the host session (current-session mode)",
    )


INPUT_DESTS = (
    "project_root",
    "task_group",
    "task_id",
    "task_type",
    "brief",
    "approved_plan",
    "directive",
    "related_tasks",
    "host",
    "entry_mode",
    "role_counts",
    "role_models",
    "host_session_context_json",
)


def has_input_flags(ns: argparse.Namespace) -> bool:
    """True when any renderArgv flag was given (used to refuse mixing with --state)."""
    return any(getattr(ns, dest, None) for dest in INPUT_DESTS)


def inputs_from_namespace(ns: argparse.Namespace, *, cwd: Path | None = None) -> PrepareInputs:
    """Build `PrepareInputs` from parsed flags, checking the required ones."""
    values: dict[str, Any] = {d: getattr(ns, d, None) for d in INPUT_DESTS}
    return inputs_from_mapping(values, cwd=cwd)


def inputs_from_mapping(values: Mapping[str, Any], *, cwd: Path | None = None) -> PrepareInputs:
    """Build `PrepareInputs` from a snake_case mapping of flag values."""
    missing = [
        "--" + name.replace("_", "-")
        for name in ("task_group", "task_id", "task_type", "brief")
        if not values.get(name)
    ]
    if missing:
        raise UsageError("okstra prepare: missing required flag(s): " + ", ".join(missing))
    task_type = str(values["task_type"])
    # Known task types come from the profiles (a workspace may add its own); the
    # catalog refuses unknown ones. Here only the shape is checked: it names a directory.
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", task_type):
        raise UsageError(
            f"invalid task type {task_type!r}: expected a lower-case slug such as "
            f"{TASK_TYPES[0]!r}",
            field="--task-type",
        )
    entry_mode = str(values.get("entry_mode") or "")
    if entry_mode and entry_mode not in ENTRY_MODES:
        raise UsageError(
            f"unknown entry mode {entry_mode!r}: expected one of {', '.join(ENTRY_MODES)}",
            field="--entry-mode",
        )
    root = Path(str(values.get("project_root") or (cwd or Path.cwd()))).expanduser()
    if not root.is_absolute():
        root = (cwd or Path.cwd()) / root
    hsc = str(values.get("host_session_context_json") or "")
    parse_host_session_context(hsc)  # validate now: a bad value is a usage error
    return PrepareInputs(
        project_root=root.resolve(),
        task_group=str(values["task_group"]),
        task_id=str(values["task_id"]),
        task_type=task_type,
        brief=str(values["brief"]),
        approved_plan=str(values.get("approved_plan") or ""),
        directive=str(values.get("directive") or ""),
        related_tasks=str(values.get("related_tasks") or ""),
        host=str(values.get("host") or ""),
        entry_mode=entry_mode,
        role_counts=tuple(str(v) for v in values.get("role_counts") or ()),
        role_models=tuple(str(v) for v in values.get("role_models") or ()),
        host_session_context_json=hsc,
    )


def parse_argv(argv: Sequence[str], *, cwd: Path | None = None) -> PrepareInputs:
    """Parse a renderArgv list (exactly the flags `to_argv` produces)."""
    parser = _RaisingParser(prog="okstra prepare", add_help=False)
    add_input_arguments(parser)
    ns = parser.parse_args(list(argv))
    return inputs_from_namespace(ns, cwd=cwd)
