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
from .project import (
    EXPECTED,
    MAX_ARG,
    RUN_ARG,
    RUN_ID,
    RunPlace,
    is_name,
    project_root_or_error,
    run_at_path,
    run_places,
    runs_named,
)
from .runinfo import READ_ERRORS, read_run


def locate_run(value: str, start: Path, env: Mapping[str, str] | None = None) -> Path:
    """The run directory `value` names, looked up from `start` (the current directory).

    Raises `UsageError` (no such run, or several) or `UnsafeProjectError`."""
    if not value or len(value) > MAX_ARG or "\0" in value:
        raise UsageError(f"expected a run ({EXPECTED})", field=RUN_ARG)
    if not is_name(value):
        if "/" in value:
            return run_at_path(value, start, env).path
        raise UsageError(f"no such run: {value} ({EXPECTED})", field=RUN_ARG)
    try:
        root = project_root_or_error(start, env)
    except UnsafeProjectError:
        raise
    except UsageError:
        if "/" in value and os.path.lexists(start / value):
            return run_at_path(value, start, env).path
        raise
    found = _by_name(root, value)
    if found is not None:
        return found.path
    if "/" in value and os.path.lexists(start / value):
        return run_at_path(value, start, env).path
    raise UsageError(f"no run {value} in the project at {root}", field=RUN_ARG)


def _by_name(root: Path, value: str) -> RunPlace | None:
    parts = value.split("/")
    found = runs_named(root, parts) if RUN_ID.fullmatch(parts[-1]) else []
    if not found and len(parts) == 2:
        # `<group>/<task-id>`: the task's newest run (of those with a manifest).
        found = _newest(
            p
            for p, real in run_places(root)
            if real
            and (p.group, p.task) == (parts[0], parts[1])
            and os.path.lexists(p.path / RUN_MANIFEST)
        )
    if len(found) > 1:
        listed = ", ".join(p.ref for p in found)
        raise UsageError(
            f"{value} names several runs ({listed}); give <task>/<run-id>", field=RUN_ARG
        )
    return found[0] if found else None


def _newest(places: Iterable[RunPlace]) -> list[RunPlace]:
    def key(place: RunPlace) -> tuple[str, str]:
        try:
            info = read_run(place.path)
            stamp = info.created_at.astimezone(UTC).isoformat() if info.created_at else ""
        except READ_ERRORS:
            stamp = ""
        return (stamp, place.name)

    ordered = sorted(places, key=key)
    return ordered[-1:]
