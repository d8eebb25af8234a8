"""A worker's directory: `<run dir>/workers/<role execution ref>/`.

prompt.md     the prompt (the CLI reads it on standard input)
launch.json   what the supervisor runs (`WorkerLaunch`)
env.json      tmux only: the starting okstra's environment, read and removed by
              the supervisor at once (a tmux pane inherits the tmux server's)
output.log    everything the CLI wrote (stdout and stderr, as it came)
stdout.log    its standard output alone (the result, when it names no file)
result.md     the `{result_file}` of a template that names one
exit.json     how it ended (`WorkerExit`), written once by the supervisor
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ...documents.worker import WorkerExit, WorkerLaunch
from ...errors import OkstraError
from ...store import make_private_dirs, read_bytes

WORKERS_DIR = "workers"
LAUNCH = "launch.json"
ENV = "env.json"
EXIT = "exit.json"
PROMPT = "prompt.md"
RESULT = "result.md"
OUTPUT = "output.log"
STDOUT = "stdout.log"
# A role execution ref as okstra makes them; anything else never names a directory.
_REF = re.compile(r"^role-exec-[a-z][a-z0-9-]*-\d{3,}$")
# How much of a log a look reads from its end (the last line, the last lines).
TAIL_BYTES = 16_384
MAX_RESULT_BYTES = 64 * 1024 * 1024


def worker_dir(run_dir: Path, ref: str) -> Path:
    """The directory of role execution `ref` (a ref okstra made; nothing else)."""
    if not _REF.fullmatch(ref):
        raise OkstraError(f"not a role execution ref: {ref!r}")
    return run_dir / WORKERS_DIR / ref


def make_worker_dir(run_dir: Path, ref: str) -> Path:
    directory = worker_dir(run_dir, ref)
    make_private_dirs(directory, inside=run_dir)
    return directory


def read_launch(directory: Path) -> WorkerLaunch:
    return WorkerLaunch.read(directory / LAUNCH)


def read_exit(directory: Path) -> WorkerExit | None:
    """The exit record, None while there is none (or it is not one okstra wrote)."""
    path = directory / EXIT
    if not os.path.lexists(path):
        return None
    try:
        return WorkerExit.read(path)
    except OkstraError:
        return None


def tail_lines(path: Path, count: int) -> list[str]:
    """The last `count` non-empty lines of a log (read from its end, never a link)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return []
    try:
        size = os.fstat(fd).st_size
        start = max(0, size - TAIL_BYTES)
        data = os.pread(fd, size - start, start)
    except OSError:
        return []
    finally:
        os.close(fd)
    text = data.decode("utf-8", errors="replace").replace("\r\n", "\n")
    lines = [line.rstrip() for line in text.split("\n")]
    if start > 0 and lines:
        lines = lines[1:]  # the first one was cut
    return [line for line in lines if line.strip()][-count:]


def read_result(path: Path) -> bytes:
    return read_bytes(path, what="worker result", follow=False, limit=MAX_RESULT_BYTES)
