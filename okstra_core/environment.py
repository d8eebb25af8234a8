"""The environment seam: PATH look-up, env vars, clock, id source.

Pool, resolver, wizard and launcher take an `Environment` so tests inject a fake
instead of monkeypatching internals.
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime

from .records import dataclass, field

# An agent host that runs okstra inside its session can say which model (and effort)
# that session runs; okstra cannot find it out by itself. Every command reads these.
HOST_MODEL_ENV = "OKSTRA_HOST_MODEL"
HOST_EFFORT_ENV = "OKSTRA_HOST_EFFORT"


def _utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Environment:
    """What okstra reads from the machine it runs on.

    Attributes:
        env: environment variables (PATH is read from here).
        now: the clock (timezone-aware UTC).
        new_uuid: the uuid source for session ids and invocation ids.
        which_override: when set, replaces the PATH look-up (tests).
    """

    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    now: Callable[[], datetime] = _utcnow
    new_uuid: Callable[[], uuid.UUID] = uuid.uuid4
    which_override: Callable[[str], str | None] | None = None

    @classmethod
    def real(cls) -> Environment:
        return cls(env=dict(os.environ))

    def which(self, cli: str) -> str | None:
        """Find `cli` on this environment's PATH (not the process's)."""
        if self.which_override is not None:
            return self.which_override(cli)
        return which(cli, self.env.get("PATH", ""))

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.env.get(key, default)

    def okstra_command(self, argv0: str | None = None) -> str:
        """How to start this okstra from another directory, as a person can type it.

        `okstra` when one is on PATH; the running script's absolute path when it is not
        (the README's `.venv/bin/okstra`: a relative path stops working after `cd`);
        `python -m okstra` for a module run. `argv0` defaults to this process's.
        """
        script = sys.argv[0] if argv0 is None else argv0
        name = os.path.basename(script)
        if self.which("okstra") is not None:
            return "okstra"
        if name == "okstra":
            return os.path.abspath(script)
        parent = os.path.basename(os.path.dirname(script))
        if name == "__main__.py" and parent in ("okstra", "okstra_tui"):
            return "python -m okstra"
        return "okstra"


def which(command: str, path: str) -> str | None:
    """`shutil.which(command, path=path)` on POSIX (without importing shutil).

    A command with a directory part is checked as it is; otherwise each directory of
    `path` in order (an empty entry is the current directory). A match is an existing
    file that is not a directory and that this user may execute.
    """
    found = locate(command, path)
    return found[0] if found is not None else None


def locate(command: str, path: str) -> tuple[str, str | None] | None:
    """`which`, and the PATH entry it found `command` through (None: no PATH look-up,
    the command had a directory part; "" is the empty entry, the current directory)."""
    if os.path.dirname(command):
        return (command, None) if _runnable(command) else None
    if not path:
        return None
    seen: set[str] = set()
    for directory in path.split(os.pathsep):
        if directory in seen:
            continue
        seen.add(directory)
        name = os.path.join(directory, command)
        if _runnable(name):
            return name, directory
    return None


def _runnable(name: str) -> bool:
    return os.path.exists(name) and os.access(name, os.X_OK) and not os.path.isdir(name)
