"""The environment seam: PATH look-up, env vars, clock, id source.

Pool, resolver, wizard and launcher take an `Environment` so tests inject a fake
instead of monkeypatching internals.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

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
        return shutil.which(cli, path=self.env.get("PATH", ""))

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.env.get(key, default)
