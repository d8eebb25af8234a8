"""The recorded verdicts of `cli_readiness`, kept between processes (derived data).

A verdict is keyed by everything it follows from: the provider's version, help, flag and
login rules; the CLI file (resolved path, size, mtime, inode); which login variables are
set (names only) and the credentials files' state. One older than `MAX_AGE` is not used
(a keychain login may have changed), and using a verdict never makes it younger.
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


def keep_if_new(key: str, verdict: Verdict, kept: Verdict | None, environment: Environment) -> None:
    """Record `verdict` (best effort) unless the same one is kept and under half its age."""
    same = kept is not None and kept._replace(at=0.0) == verdict._replace(at=0.0)
    if same and kept is not None and time.time() - kept.at < MAX_AGE / 2:
        return
    cache = user_dirs(environment.env).cache
    derived.keep_value(cache, KIND, key, verdict._replace(at=time.time()))
