"""Helpers of the prepare tests (imported by name; rootdir-relative like the others)."""

from __future__ import annotations

import os
from pathlib import Path

from okstra_core.cli.roleargs import request_from_argv
from okstra_core.environment import Environment
from okstra_core.request import RunRequest

_FLAG = {"role_counts": "--role-count", "role_models": "--role-model"}


def request_of(project: Path, **kw: object) -> RunRequest:
    """A run request built the way `okstra prepare <flags…>` builds it.

    Keyword names are the flags' (`task_id`, `role_counts=("analyser=2",)`, …); the
    defaults are a requirements-discovery of `perf/widget` on the terminal host.
    """
    base: dict[str, object] = {
        "project_root": project,
        "task_group": "perf",
        "task_id": "widget",
        "task_type": "requirements-discovery",
        "brief": "brief.md",
        "host": "terminal",
    }
    base.update(kw)
    argv: list[str] = []
    for key, value in base.items():
        flag = _FLAG.get(key, "--" + key.replace("_", "-"))
        for item in value if isinstance(value, tuple | list) else (value,):
            if item != "":
                argv.append(f"{flag}={item}")
    return request_from_argv(argv, Environment(env=dict(os.environ)))
