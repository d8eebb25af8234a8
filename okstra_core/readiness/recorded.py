"""The recorded verdicts of `cli_readiness`: what running a CLI told, kept between
processes so that a command does not run the CLI again (derived data: it makes the
verdict faster, never different — `cli_readiness` says when a record is used).

A verdict is recorded (derived data, `okstra_core.derived`, kind `readiness`) under a
key made of everything it follows from: the provider's version, help, launch-flag and
login rules; the CLI file PATH found (its resolved path, size, modification time and
inode — a reinstalled or upgraded CLI is another file); which of its login variables
are set (names only, never values) and the state of its credentials files. A verdict
older than `MAX_AGE` is not used (a login the CLI keeps elsewhere, such as a keychain,
may have changed), and using a verdict never makes it younger: only running the CLI
again records a new one.
"""

from __future__ import annotations

import os
import time
from typing import NamedTuple

from .. import derived
from ..catalog.models import ProviderSpec
from ..environment import Environment
from ..paths import user_dirs
from .login import expand_path

MAX_AGE = 3600.0
KIND = derived.Kind(
    "readiness", keep=32, code=("readiness/cli.py", "readiness/login.py", "readiness/recorded.py")
)


class Verdict(NamedTuple):
    """What running the CLI told (see `Readiness` for the fields)."""

    version: str | None
    problem: str | None
    remedy: str | None
    flags_problem: str | None
    flags_remedy: str | None
    logged_in: bool | None
    login: str | None
    at: float = 0.0


def _stat(path: str) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return "absent"
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}:{st.st_mode:o}"


def key_for(provider: ProviderSpec, resolved: str, environment: Environment) -> str:
    """The key of the verdict on this CLI file with this login evidence."""
    launch = provider.launch
    parts: list[str | None] = [
        provider.id,
        repr((launch.version, launch.help, launch.required_flags, provider.roles)),
        resolved,
        _stat(resolved),
    ]
    login = provider.login
    if login is not None:
        parts.append(repr((login.env, login.files, login.status, login.status_pattern)))
        parts += [f"{name}={'set' if environment.get(name) else 'unset'}" for name in login.env]
        parts += [_stat(str(expand_path(f, environment))) for f in login.files]
    return derived.key(KIND, *parts)


def recall(key: str, environment: Environment) -> Verdict | None:
    """The recorded verdict under `key`, unless it is older than `MAX_AGE`."""
    verdict = derived.recall_value(user_dirs(environment.env).cache, KIND, key, Verdict)
    if verdict is None or not 0 <= time.time() - verdict.at <= MAX_AGE:
        return None
    return verdict


def keep(key: str, verdict: Verdict, environment: Environment) -> None:
    """Record `verdict` (best effort, like every derived data)."""
    derived.keep_value(
        user_dirs(environment.env).cache, KIND, key, verdict._replace(at=time.time())
    )


def keep_if_new(key: str, verdict: Verdict, kept: Verdict | None, environment: Environment) -> None:
    """Record `verdict` unless the same one is kept already and not half its age: a
    check that confirms what is kept writes nothing."""
    same = kept is not None and kept._replace(at=0.0) == verdict._replace(at=0.0)
    if same and kept is not None and time.time() - kept.at < MAX_AGE / 2:
        return
    keep(key, verdict, environment)
