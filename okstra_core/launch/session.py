"""Session ids: minted by okstra (`uuid4`, `token`) or discovered after launch (`discover`).

Discovery (codex): the CLI mints its own id and records it in a rollout file whose
first line is JSON naming the working directory. okstra picks the newest such file
whose `cwd_field` equals the project directory and whose mtime is not older than the
launch — never an older session of the same project, never another project's.
"""

from __future__ import annotations

import glob
import json
import os
import re
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path

from okstra_core.catalog.argv import render_element
from okstra_core.catalog.models import DiscoverSpec, SessionIdKind
from okstra_core.environment import Environment
from okstra_core.errors import DataFileError, OkstraError
from okstra_core.store import open_regular

# A rollout's first line carries the whole base prompt; never read more than this.
_FIRST_LINE_CAP = 8 * 1024 * 1024
_POLL_SECONDS = 0.2
_ENV_REF = re.compile(r"\{env\.([A-Za-z_][A-Za-z0-9_]*)\}")


def mint_session_id(kind: SessionIdKind, environment: Environment) -> str | None:
    """A fresh session id of the declared kind; None when the CLI mints it (`discover`)."""
    if kind == "uuid4":
        return str(environment.new_uuid())
    if kind == "token":
        # A token for CLIs that take any `[A-Za-z0-9]` id: the uuid's hex, no dashes.
        return environment.new_uuid().hex
    return None


def discover_env_names(spec: DiscoverSpec) -> tuple[str, ...]:
    """Environment variables the discovery glob reads (`{env.NAME}`)."""
    return tuple(dict.fromkeys(_ENV_REF.findall(spec.glob)))


def discover_glob(spec: DiscoverSpec, environment: Environment, *, source: str = "") -> str:
    """The concrete glob: `{env.X}` from the environment or `default_home`, `{id}` → `*`
    (DataFileError when an `{env.X}` is unset and there is no default_home)."""
    home = environment.get("HOME") or str(Path.home())
    default = spec.default_home
    if default.startswith("~"):
        default = home + default[1:]
    defaults = {name: default for name in discover_env_names(spec)} if default else {}
    # `{id}` is what we are looking for: any file name fits.
    pattern = spec.glob.replace("{id}", "*")
    return render_element(
        pattern,
        {},
        {k: v for k, v in environment.env.items() if v},
        source=source,
        field="launch.discover.glob",
        env_defaults=defaults,
    )


def _dotted(data: object, dotted: str) -> object:
    for part in dotted.split("."):
        if not isinstance(data, Mapping) or part not in data:
            return None
        data = data[part]
    return data


def _first_line_json(path: Path) -> object:
    try:
        # A regular file only: a FIFO among the CLI's files must not hang the lookup.
        with os.fdopen(open_regular(path, os.O_RDONLY, follow=True), "rb") as fh:
            line = fh.readline(_FIRST_LINE_CAP)
        return json.loads(line)
    except (OSError, ValueError, OkstraError):
        # Not there any more, or still being written: not (yet) a candidate.
        return None


def _same_dir(a: str, b: Path) -> bool:
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except (OSError, ValueError):
        return False


def find_sessions(
    spec: DiscoverSpec,
    project_root: Path,
    launched_at: datetime,
    environment: Environment,
    *,
    source: str = "",
) -> list[str]:
    """The ids the CLI recorded for `project_root` since `launched_at`, newest first."""
    id_re = re.compile(spec.id_pattern)
    threshold = launched_at.timestamp()
    found: list[tuple[float, str]] = []
    for name in glob.iglob(discover_glob(spec, environment, source=source), recursive=True):
        path = Path(name)
        match = id_re.search(path.name)
        if match is None or not match.groups():
            continue
        try:
            mtime = path.stat().st_mtime
        except OSError:
            continue
        if mtime < threshold:
            continue
        cwd = _dotted(_first_line_json(path), spec.cwd_field)
        if isinstance(cwd, str) and _same_dir(cwd, project_root):
            found.append((mtime, match.group(1)))
    found.sort(key=lambda item: item[0], reverse=True)
    return list(dict.fromkeys(sid for _, sid in found))


def find_session_once(
    spec: DiscoverSpec,
    project_root: Path,
    launched_at: datetime,
    environment: Environment,
    *,
    source: str = "",
) -> str | None:
    """One look (no waiting): the newest of `find_sessions`, or None."""
    found = find_sessions(spec, project_root, launched_at, environment, source=source)
    return found[0] if found else None


def _check_id_pattern(spec: DiscoverSpec, source: str) -> None:
    field = "launch.discover.id_pattern"
    try:
        groups = re.compile(spec.id_pattern).groups
    except re.error as exc:
        raise DataFileError(
            f"not a valid regular expression: {exc}", path=source, field=field
        ) from exc
    if groups < 1:
        raise DataFileError("needs one group capturing the session id", path=source, field=field)


def discover_sessions(
    spec: DiscoverSpec,
    project_root: Path,
    launched_at: datetime,
    environment: Environment,
    *,
    timeout: float | None = None,
    source: str = "",
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> list[str]:
    """Wait (bounded) until the CLI has recorded a session; every match, newest first.

    For where picking the newest would be a guess (`okstra resume`, long after launch).
    `timeout`: default `spec.timeout_seconds`, 0 = look once. DataFileError when
    `id_pattern` is not a valid regex with a group.
    """
    _check_id_pattern(spec, source)
    budget = spec.timeout_seconds if timeout is None else timeout
    deadline = clock() + max(budget, 0.0)
    while True:
        found = find_sessions(spec, project_root, launched_at, environment, source=source)
        if found or clock() >= deadline:
            return found
        sleep(min(_POLL_SECONDS, max(deadline - clock(), 0.0)))


def discover_session(
    spec: DiscoverSpec,
    project_root: Path,
    launched_at: datetime,
    environment: Environment,
    *,
    timeout: float | None = None,
    source: str = "",
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> str | None:
    """The newest of `discover_sessions`' matches; None when the wait runs out."""
    found = discover_sessions(
        spec,
        project_root,
        launched_at,
        environment,
        timeout=timeout,
        source=source,
        sleep=sleep,
        clock=clock,
    )
    return found[0] if found else None
