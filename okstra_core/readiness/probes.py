"""Running a CLI to ask it something: bounded, in its own process group, side by side.

On timeout the whole group is killed, so a child holding the output open cannot stall a
check. `subprocess` is imported only when a probe runs (a wizard step recalls verdicts).
Whether a CLI is logged in is told offline by its provider file's `[login]` rules: a
set API-key variable or a non-empty credentials file, else the CLI's status command
(exit 0 / 1, trusted only when its output matches `status_pattern`: otherwise "cannot
tell"). Only variable names and file paths are reported, never a value or the output.
"""

from __future__ import annotations

import os
import re
import signal
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import subprocess

from ..catalog.models import LOGIN_FILE_PLACEHOLDER, LoginSpec
from ..environment import Environment

# At most this many probes run at once (a team names a handful of providers).
MAX_PARALLEL_PROBES = 8
# After a timeout kill, how long the killed group gets to close its pipes.
_REAP_GRACE = 2.0

# A login status command answers at once, offline; one that does not is not waited on.
STATUS_TIMEOUT = 5.0

_T = TypeVar("_T")


def run_probe(
    argv: Sequence[str], environment: Environment, timeout: float
) -> tuple[int, str, str]:
    """Run a probe command: (exit status, stdout, stderr).

    Raises:
        TimeoutError: it ran longer than `timeout` (it was killed).
        OSError: it could not start.
    """
    if environment.probe_override is not None:
        return environment.probe_override(argv)
    import subprocess

    proc = subprocess.Popen(
        list(argv),
        env=dict(environment.env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        _kill_group(proc)
        raise TimeoutError(f"{argv[0]} ran longer than {timeout:g} s") from exc
    except BaseException:
        _kill_group(proc)
        raise
    return proc.returncode, out, err


def _kill_group(proc: subprocess.Popen[str]) -> None:
    """Kill the probe and everything it started; reap it without waiting on its pipes."""
    import subprocess

    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:  # already gone (or its group is): kill the process itself
        proc.kill()
    try:
        proc.communicate(timeout=_REAP_GRACE)
    except subprocess.TimeoutExpired:
        # A descendant that left the group still holds a pipe: stop reading it.
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
        proc.wait()


def first_line(*texts: str) -> str:
    """The first non-blank line of the first text that has one ("" if none)."""
    for text in texts:
        for line in text.splitlines():
            if line.strip():
                return line.strip()
    return ""


def run_concurrently(jobs: Sequence[Callable[[], _T]], limit: int) -> list[_T]:
    """Run `jobs` on up to `limit` threads; their results in order.

    The first exception a job raised is raised once all ended. Plain threads, because
    `concurrent.futures` imports `logging`.
    """
    results: list[Any] = [None] * len(jobs)
    errors: list[BaseException] = []
    pending = iter(range(len(jobs)))
    lock = threading.Lock()

    def worker() -> None:
        while True:
            with lock:
                index = next(pending, None)
            if index is None:
                return
            try:
                results[index] = jobs[index]()
            except BaseException as exc:  # handed to the caller below
                with lock:
                    errors.append(exc)

    threads = [
        threading.Thread(target=worker, name=f"okstra-preflight-{n}", daemon=True)
        for n in range(max(1, min(limit, len(jobs))))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return results


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
    login: LoginSpec, cli_path: str, environment: Environment, *, timeout: float
) -> tuple[bool | None, str]:
    """Whether the CLI has credentials (None: cannot tell), and what told."""
    told, text = told_by_evidence(login, environment)
    if told:
        return told, text
    return told_by_status(login, cli_path, environment, text, timeout=timeout)


def login_fix(login: LoginSpec, cli: str) -> str:
    """How a person logs in: the provider file's `how`, else a generic line."""
    return login.how or f"log in with `{cli}`"
