"""The environment seam: PATH look-up, env vars, clock, id source (tests inject a fake)."""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime

from .records import dataclass, field

# What a host running okstra inside its session says it runs (okstra cannot tell).
HOST_MODEL_ENV = "OKSTRA_HOST_MODEL"
HOST_EFFORT_ENV = "OKSTRA_HOST_EFFORT"


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _own_dir() -> str | None:
    """The directory of okstra's own interpreter (a venv's `bin`), or None."""
    return os.path.dirname(sys.executable) or None


@dataclass(frozen=True)
class Environment:
    """What okstra reads from the machine it runs on (the `*_override`s are for tests).

    `own_dir`: where okstra's own commands are; a CLI not on PATH is looked for there.
    """

    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    now: Callable[[], datetime] = _utcnow
    new_uuid: Callable[[], uuid.UUID] = uuid.uuid4
    which_override: Callable[[str], str | None] | None = None
    probe_override: Callable[[Sequence[str]], tuple[int, str, str]] | None = None
    own_dir: str | None = field(default_factory=_own_dir)

    @classmethod
    def real(cls) -> Environment:
        return cls(env=dict(os.environ))

    def which(self, cli: str) -> str | None:
        """Find `cli` on this environment's PATH (not the process's)."""
        if self.which_override is not None:
            return self.which_override(cli)
        found = self.locate(cli)
        return found[0] if found is not None else None

    def locate(self, cli: str) -> tuple[str, str | None] | None:
        """`locate` on this environment's PATH, then in `own_dir` (the entry: None)."""
        found = locate(cli, self.env.get("PATH", ""))
        if found is None and self.own_dir and not os.path.dirname(cli):
            own = os.path.join(self.own_dir, cli)
            if _runnable(own):
                return own, None
        return found

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.env.get(key, default)

    def okstra_command(self, argv0: str | None = None, executable: str | None = None) -> str:
        """How to run this okstra from any directory, as a quoted shell command."""
        own = self.okstra_script(argv0, executable)
        # PATH only (not `own_dir`): a person types what their shell finds.
        found = (
            self.which_override("okstra")
            if self.which_override is not None
            else which("okstra", self.env.get("PATH", ""))
        )
        if found is not None and own is not None and _same_file(found, own):
            return "okstra"
        if own is not None:
            return quote(own)
        return f"{quote(executable or sys.executable)} -m okstra"

    def okstra_script(self, argv0: str | None = None, executable: str | None = None) -> str | None:
        """The absolute path of this okstra's own command (argv[0], else beside the interpreter)."""
        script = sys.argv[0] if argv0 is None else argv0
        if os.path.basename(script) == "okstra":
            return os.path.abspath(script)
        beside = os.path.join(os.path.dirname(executable or sys.executable), "okstra")
        return os.path.abspath(beside) if _runnable(beside) else None

    def okstra_first_env(
        self, env: Mapping[str, str] | None = None, argv0: str | None = None
    ) -> dict[str, str]:
        """`env` (default: this one's) with okstra's own command directory first on PATH."""
        env = dict(self.env if env is None else env)
        script = self.okstra_script(argv0)
        if script is None:
            return env
        directory = os.path.dirname(script)
        rest = [d for d in env.get("PATH", "").split(os.pathsep) if d and d != directory]
        env["PATH"] = os.pathsep.join([directory, *rest])
        return env


def quote(text: str) -> str:
    """`shlex.quote` (without importing shlex): one word for a POSIX shell."""
    if text and all((c.isascii() and c.isalnum()) or c in "@%+=:,./-_" for c in text):
        return text
    return "'" + text.replace("'", "'\\''") + "'"


def _same_file(one: str, other: str) -> bool:
    try:
        return os.path.samefile(one, other)
    except OSError:
        return os.path.realpath(one) == os.path.realpath(other)


def which(command: str, path: str) -> str | None:
    """`shutil.which(command, path=path)` on POSIX (without importing shutil)."""
    found = locate(command, path)
    return found[0] if found is not None else None


def locate(command: str, path: str) -> tuple[str, str | None] | None:
    """`which`, and the PATH entry it found `command` through (None: a directory part)."""
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
