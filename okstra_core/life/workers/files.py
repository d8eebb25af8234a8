"""A worker's directory: `<run dir>/workers/<role execution ref>/`.

prompt.md     the prompt (the CLI reads it on standard input)
launch.json   what the supervisor runs (`WorkerLaunch`)
env.json      tmux only: the starting okstra's environment, read and removed at once
output.log    everything the CLI wrote (stdout and stderr, as it came)
stdout.log    its standard output alone (for a usage-reporting CLI, its JSON's text)
events.jsonl  that CLI's standard output as written (JSON: `usage.py`)
result.md     the `{result_file}` of a template that names one
exit.json     how it ended (`WorkerExit`), written once by the supervisor

okstra opens only these fixed names, in that directory, without following links: the
names a `launch.json` holds never choose what is opened.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from ...documents.worker import WorkerExit, WorkerLaunch
from ...errors import DataFileError, OkstraError
from ...store import OpenDirectory, make_private_dirs, open_directory, parse_json

WORKERS_DIR = "workers"
LAUNCH = "launch.json"
ENV = "env.json"
EXIT = "exit.json"
PROMPT = "prompt.md"
RESULT = "result.md"
OUTPUT = "output.log"
STDOUT = "stdout.log"
EVENTS = "events.jsonl"
# A role execution ref as okstra makes them; anything else never names a directory.
_REF = re.compile(r"^role-exec-[a-z][a-z0-9-]*-\d{3,}$")
# How much of a log a look reads from its end (the last line, the last lines).
TAIL_BYTES = 16_384
MAX_RESULT_BYTES = 64 * 1024 * 1024
_T = TypeVar("_T")


def worker_dir(run_dir: Path, ref: str) -> Path:
    """The directory of role execution `ref` (a ref okstra made; nothing else)."""
    if not _REF.fullmatch(ref):
        raise OkstraError(f"not a role execution ref: {ref!r}")
    return run_dir / WORKERS_DIR / ref


def make_worker_dir(run_dir: Path, ref: str) -> Path:
    directory = worker_dir(run_dir, ref)
    make_private_dirs(directory, inside=run_dir)
    return directory


def open_worker_dir(run_dir: Path, ref: str) -> OpenDirectory:
    """The worker's directory, opened from the run directory without following a link."""
    worker_dir(run_dir, ref)  # a ref okstra made
    return open_directory(run_dir, WORKERS_DIR, ref, what="worker directory")


def read_launch(run_dir: Path, ref: str) -> WorkerLaunch:
    with open_worker_dir(run_dir, ref) as directory:
        path = directory.path / LAUNCH
        data = directory.read(LAUNCH, what=WorkerLaunch.describe(), error=DataFileError)
    assert data is not None
    return WorkerLaunch.parse(parse_json(data, path, error=DataFileError), path=path)


def _look(run_dir: Path, ref: str, read: Callable[[OpenDirectory], _T], default: _T) -> _T:
    """`read` of the worker's directory; `default` when it cannot be opened or read."""
    try:
        with open_worker_dir(run_dir, ref) as directory:
            return read(directory)
    except OkstraError:
        return default


def has_exit(run_dir: Path, ref: str) -> bool:
    """Whether the worker left an exit record (of whatever kind: read it to know more)."""
    return _look(run_dir, ref, lambda directory: directory.exists(EXIT), False)


def read_exit(run_dir: Path, ref: str) -> WorkerExit | None:
    """The exit record, None while there is none (or it is not one okstra wrote)."""
    try:
        with open_worker_dir(run_dir, ref) as directory:
            data = directory.read(EXIT, what=WorkerExit.describe(), missing_ok=True)
        return None if data is None else WorkerExit.parse(parse_json(data, Path(EXIT)))
    except OkstraError:
        return None


def tail_lines(run_dir: Path, ref: str, count: int) -> list[str]:
    """The last `count` non-empty lines of the worker's `output.log` (a regular file)."""
    tail = _look(run_dir, ref, lambda directory: directory.tail(OUTPUT, TAIL_BYTES), None)
    if tail is None:
        return []
    data, start = tail
    text = data.decode("utf-8", errors="replace").replace("\r\n", "\n")
    lines = [line.rstrip() for line in text.split("\n")]
    if start > 0 and lines:
        lines = lines[1:]  # the first one was cut
    return [line for line in lines if line.strip()][-count:]


def last_written(run_dir: Path, ref: str) -> datetime | None:
    """When the worker's `output.log` (a regular file) was last written."""
    try:
        with open_worker_dir(run_dir, ref) as directory:
            seen = os.stat(OUTPUT, dir_fd=directory.fd, follow_symlinks=False)
    except (OSError, OkstraError):
        return None
    if not stat.S_ISREG(seen.st_mode):
        return None
    return datetime.fromtimestamp(seen.st_mtime, UTC)


def read_result(run_dir: Path, ref: str, *, result_file: bool) -> tuple[str, Path, bytes]:
    """(source, path, bytes) the worker produced: `result.md` when its template names one
    and it is there, else `stdout.log`; OkstraError for a link, a FIFO or too large."""
    with open_worker_dir(run_dir, ref) as directory:
        return _product(directory, result_file=result_file)


def _product(directory: OpenDirectory, *, result_file: bool) -> tuple[str, Path, bytes]:
    source, name = "stdout", STDOUT
    if result_file and directory.exists(RESULT):
        source, name = "result-file", RESULT
    data = directory.read(name, what="worker result", limit=MAX_RESULT_BYTES, missing_ok=True)
    return source, directory.path / name, data or b""


def head_text(run_dir: Path, ref: str, limit: int = TAIL_BYTES) -> str:
    """The first `limit` bytes of the worker's `output.log` as text ("" without one)."""
    try:
        with open_worker_dir(run_dir, ref) as directory:
            data = directory.read(
                OUTPUT, what="worker output", limit=MAX_RESULT_BYTES, missing_ok=True
            )
    except OkstraError:
        return ""
    return (data or b"")[:limit].decode("utf-8", errors="replace")


def product_name(run_dir: Path, launch: WorkerLaunch) -> str:
    """The file holding what the worker produced (see `read_result`)."""
    if launch.result_file is None:
        return STDOUT
    found = _look(run_dir, launch.role_execution_ref, lambda d: d.exists(RESULT), False)
    return RESULT if found else STDOUT


def turn_dir_name(number: int) -> str:
    """Where an earlier turn's files are kept in the worker's directory."""
    return f"turn-{number}"


def archive_turn(run_dir: Path, ref: str, number: int) -> Path:
    """Move the files of the worker's turn `number` into its `turn-<n>/`; returns it."""
    directory = worker_dir(run_dir, ref)
    kept = directory / turn_dir_name(number)
    make_private_dirs(kept, inside=run_dir)
    for name in (PROMPT, LAUNCH, OUTPUT, STDOUT, EVENTS, RESULT, EXIT):
        if os.path.lexists(directory / name):
            os.replace(directory / name, kept / name)
    return kept


def read_turn_result(
    run_dir: Path, ref: str, number: int, *, result_file: bool
) -> tuple[str, Path, bytes]:
    """`read_result` of an earlier turn (its files in `turn-<n>/`)."""
    with open_directory(
        run_dir, WORKERS_DIR, worker_dir(run_dir, ref).name, turn_dir_name(number),
        what="worker turn directory",
    ) as directory:  # fmt: skip
        return _product(directory, result_file=result_file)
