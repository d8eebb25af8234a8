"""Running a CLI to ask it something: bounded, in its own process group, side by side.

On timeout the whole group is killed, so a child holding the output open cannot stall a
check. `subprocess` is imported only when a probe runs (a wizard step recalls verdicts).
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import subprocess

from ..environment import Environment

# At most this many probes run at once (a team names a handful of providers).
MAX_PARALLEL_PROBES = 8
# After a timeout kill, how long the killed group gets to close its pipes.
_REAP_GRACE = 2.0

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
