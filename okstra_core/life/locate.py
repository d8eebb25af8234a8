"""Naming one run the way git finds a repository.

A run id, `<task>/<run>`, `<group>/<task>/<run>` or a task (its newest run) is looked up
in the project above the current directory; another argument with `/` must be a run path."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from datetime import UTC
from pathlib import Path

from ..discovery import UnsafeProjectError
from ..errors import UsageError
from ..tasks import RUN_MANIFEST
from . import project
from .runinfo import READ_ERRORS, read_run


def locate_run(value: str, start: Path, env: Mapping[str, str] | None = None) -> Path:
    """The run directory `value` names, looked up from `start` (the current directory).

    Raises `UsageError` (no such run, or several) or `UnsafeProjectError`."""
    if not value or len(value) > project.MAX_ARG or "\0" in value:
        raise UsageError(f"expected a run ({project.EXPECTED})", field=project.RUN_ARG)
    if not project.is_name(value):
        if "/" in value:
            return project.run_at_path(value, start, env).path
        raise UsageError(f"no such run: {value} ({project.EXPECTED})", field=project.RUN_ARG)
    try:
        root = project.project_root_or_error(start, env)
    except UnsafeProjectError:
        raise
    except UsageError:
        if "/" in value and os.path.lexists(start / value):
            return project.run_at_path(value, start, env).path
        raise
    found = _by_name(root, value)
    if found is not None:
        return found.path
    if "/" in value and os.path.lexists(start / value):
        return project.run_at_path(value, start, env).path
    raise UsageError(f"no run {value} in the project at {root}", field=project.RUN_ARG)


def _by_name(root: Path, value: str) -> project.RunPlace | None:
    parts = value.split("/")
    found = project.runs_named(root, parts) if project.RUN_ID.fullmatch(parts[-1]) else []
    if not found and len(parts) == 2:
        # `<group>/<task-id>`: the task's newest run (of those with a manifest).
        found = _newest(
            p
            for p, real in project.run_places(root)
            if real
            and (p.group, p.task) == (parts[0], parts[1])
            and os.path.lexists(p.path / RUN_MANIFEST)
        )
    if len(found) > 1:
        listed = ", ".join(p.ref for p in found)
        raise UsageError(
            f"{value} names several runs ({listed}); give <task>/<run-id>", field=project.RUN_ARG
        )
    return found[0] if found else None


def _newest(places: Iterable[project.RunPlace]) -> list[project.RunPlace]:
    def key(place: project.RunPlace) -> tuple[str, str]:
        try:
            info = read_run(place.path)
            stamp = info.created_at.astimezone(UTC).isoformat() if info.created_at else ""
        except READ_ERRORS:
            stamp = ""
        return (stamp, place.name)

    ordered = sorted(places, key=key)
    return ordered[-1:]
