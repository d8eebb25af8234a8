"""Whether a CLI is logged in, told offline by its provider file's `[login]` rules.

A set API-key variable or a non-empty credentials file, else the CLI's status command
(exit 0 / 1, trusted only when its output matches `status_pattern`: otherwise "cannot
tell"). Only variable names and file paths are reported, never a value or the output.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..catalog.models import LOGIN_FILE_PLACEHOLDER, LoginSpec
from ..environment import Environment
from .probes import run_probe

# A login status command answers at once, offline; one that does not is not waited on.
STATUS_TIMEOUT = 5.0


def expand_path(template: str, environment: Environment) -> Path:
    """A `[login]` file path: `{env.NAME:-default}` from the environment, `~` = HOME."""

    def value(match: re.Match[str]) -> str:
        return environment.get(match.group(1)) or match.group(2) or ""

    text = LOGIN_FILE_PLACEHOLDER.sub(value, template)
    home = environment.get("HOME") or os.path.expanduser("~")
    if text == "~" or text.startswith("~/"):
        text = home + text[1:]
    return Path(text)


def _nonempty_file(path: Path) -> bool:
    try:
        return path.is_file() and path.stat().st_size > 0
    except OSError:
        return False


def told_by_evidence(login: LoginSpec, environment: Environment) -> tuple[bool | None, str]:
    """(True, what told) when a variable or file says logged in, else (None, what was looked at)."""
    for name in login.env:
        if environment.get(name):
            return True, f"{name} is set"
    files = [expand_path(f, environment) for f in login.files]
    for path in files:
        if _nonempty_file(path):
            return True, f"credentials in {path}"
    return None, ", ".join([*login.env, *(str(p) for p in files)])


def told_by_status(
    login: LoginSpec, cli_path: str, environment: Environment, looked: str, *, timeout: float
) -> tuple[bool | None, str]:
    """The status command's answer, or, without one, "not logged in" (nothing told)."""
    if not login.status:
        return False, f"none of {looked}"
    argv = (cli_path, *login.status[1:])
    shown = " ".join((Path(cli_path).name, *login.status[1:]))
    try:
        code, out, err = run_probe(argv, environment, min(timeout, STATUS_TIMEOUT))
    except OSError:  # a TimeoutError too: it did not answer in time
        return None, f"`{shown}` did not answer"
    pattern = login.status_pattern
    answered = not pattern or re.search(pattern, out + err, re.IGNORECASE) is not None
    if answered and code == 0:
        return True, f"`{shown}` says so"
    if answered and code == 1:
        return False, f"`{shown}` says not logged in" + (f"; none of {looked}" if looked else "")
    return None, f"`{shown}` gave no answer okstra understands (exit {code})"


def logged_in_offline(
    login: LoginSpec,
    cli_path: str,
    environment: Environment,
    *,
    timeout: float,
    run_status: bool = True,
) -> tuple[bool | None, str]:
    """Whether the CLI has credentials (None: cannot tell), and what told."""
    told, text = told_by_evidence(login, environment)
    if told:
        return told, text
    if login.status and not run_status:
        return None, f"`{Path(cli_path).name} {' '.join(login.status[1:])}` would tell"
    return told_by_status(login, cli_path, environment, text, timeout=timeout)


def login_fix(login: LoginSpec, cli: str) -> str:
    """How a person logs in: the provider file's `how`, else a generic line."""
    return login.how or f"log in with `{cli}`"
