"""One error hierarchy; every message is meant for a person to act on."""

from __future__ import annotations

import errno
import os
from collections.abc import Collection
from pathlib import Path
from typing import ClassVar

from .records import camel


class OkstraError(Exception):
    """Base of every error okstra reports to a user (`exit_code` 2: bad input or usage)."""

    exit_code: int = 2
    # Attributes a subclass adds to its JSON, camelCased as the documents spell names.
    FACTS: ClassVar[Collection[str]] = ()

    def __init__(
        self, message: str, *, path: Path | str | None = None, field: str | None = None
    ) -> None:
        self.message = message
        self.path = str(path) if path is not None else None
        self.field = field
        super().__init__(self.render())

    def render(self) -> str:
        prefix = ": ".join(part for part in (self.path, self.field) if part)
        return f"{prefix}: {self.message}" if prefix else self.message

    def to_json(self) -> dict[str, object]:
        """`{"ok": false, "error", "file"?, "field"?}` and the subclass's `FACTS`.

        Written by hand: the errors sit below the documents (the store raises them).
        """
        data: dict[str, object] = {"ok": False, "error": self.render()}
        if self.path:
            data["file"] = self.path
        if self.field:
            data["field"] = self.field
        for name in self.FACTS:
            data[camel(name)] = _plain(getattr(self, name))
        return data


def _plain(value: object) -> object:
    """A fact as JSON-ready data: paths as text, sequences as lists."""
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


class DataFileError(OkstraError):
    """A profile, provider, host, config, catalog or plan file is malformed."""


class StateFileError(OkstraError):
    """A wizard state file cannot be read, is malformed or of a refused version."""


class StateInUseError(OkstraError):
    """Another process holds the advisory lock of a state file (or task)."""

    def __init__(self, path: Path | str, pid: int | None) -> None:
        who = f"pid {pid}" if pid else "pid unknown"
        super().__init__(f"state file is in use ({who})", path=path)
        self.pid = pid


class UsageError(OkstraError):
    """Bad command-line usage or a bad argument value."""


class AnswerRefused(OkstraError):
    """A wizard answer was refused; the state is unchanged (exit 0: the protocol worked)."""

    exit_code = 0


class AssignmentResolutionError(OkstraError):
    """No complete team exists. Carries every failing candidate and constraint at once."""

    exit_code = 1
    FACTS: ClassVar[Collection[str]] = ("candidates", "constraints")

    def __init__(self, candidates: list[str], constraints: list[str]) -> None:
        # A candidate tried twice (the pinned model, then the pool) is said once.
        self.candidates = list(dict.fromkeys(candidates))
        self.constraints = list(dict.fromkeys(constraints))
        lines = ["no valid team assignment exists:"]
        lines += [f"  {c}" for c in self.candidates]
        lines += [f"  {c}" for c in self.constraints]
        super().__init__("\n".join(lines))


class PrepareError(OkstraError):
    """prepare refused its inputs (nothing was written for this run)."""


class LaunchError(OkstraError):
    """Starting the lead CLI failed; the prepared run stays on disk."""

    exit_code = 1


class GitError(OkstraError):
    """A git command okstra ran on a writer's worktree or branch failed."""

    exit_code = 1


class MergeConflictError(OkstraError):
    """A writer's branch conflicts with the project's: nothing merged (`files` conflict)."""

    exit_code = 1
    FACTS: ClassVar[Collection[str]] = ("files",)

    def __init__(self, message: str, files: tuple[str, ...]) -> None:
        self.files = files
        super().__init__(message)


class FileSystemError(OkstraError):
    """A file okstra touches is unsafe, or the file system refused the operation."""


def describe_os_error(exc: OSError) -> str:
    """`No space left on device (ENOSPC)`: the errno of `exc` in words and by name."""
    code = exc.errno
    if code is None:
        return str(exc)
    words = exc.strerror or os.strerror(code)
    name = errno.errorcode.get(code)
    return f"{words} ({name})" if name else words


def os_error(exc: OSError, *, doing: str, path: Path | str | None = None) -> FileSystemError:
    """A `FileSystemError` for an `OSError` met while `doing` something to `path`."""
    where = path if path is not None else exc.filename
    return FileSystemError(f"cannot {doing}: {describe_os_error(exc)}", path=where)


class IncompleteRunError(OkstraError):
    """A prepare failed after it began writing: the run it left is named, with its state."""

    FACTS: ClassVar[Collection[str]] = (
        "run_id",
        "run_dir",
        "run_state",
        "written",
        "failed",
        "not_written",
    )

    def __init__(
        self,
        cause: OkstraError,
        *,
        run_id: str,
        run_dir: Path,
        written: list[Path],
        failed: Path,
        not_written: list[Path],
        complete: bool,
    ) -> None:
        self.cause = cause
        self.run_id = run_id
        self.run_dir = Path(run_dir)
        self.written = list(written)
        self.failed = Path(failed)
        self.not_written = list(not_written)
        self.complete = complete
        missing = ", ".join(p.name for p in self.not_written)
        state = (
            f"its files are complete, but it is not recorded in {missing}"
            if complete
            else f"it is incomplete ({len(written)} files written; not written: {missing})"
        )
        super().__init__(f"{cause.render()} — run {run_id} was left at {run_dir}: {state}")

    @property
    def run_state(self) -> str:
        return "complete-unindexed" if self.complete else "incomplete"
