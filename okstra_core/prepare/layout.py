"""Where one run's files go (`RunLayout`): shared by every builder of the run's documents."""

from __future__ import annotations

from pathlib import Path

from ..records import dataclass

__all__ = ["RunLayout", "relative"]


@dataclass(frozen=True, kw_only=True)
class RunLayout:
    """Where one run's files go, and the facts every document of the run shares.

    Attributes:
        run_id: `<task-type>-<seq>`; seq: the run's number.
        run_dir: the run's directory.
        project_root: the project's directory (paths in documents are relative to it).
        now: when the run was prepared (ISO 8601, to the second).
        session_id: the lead's session id when it is known before launch.
        paths: each file of the run (`runInputs`, `runManifest`, `leadPrompt`,
            `leadPromptMeta`, `resume`, `resumeScript`, `taskManifest`, `taskIndex`,
            `timeline`) → where it goes; rel: the same, relative to the project.
        brief: the brief, relative to the project.
    """

    run_id: str
    seq: int
    run_dir: Path
    project_root: Path
    now: str
    session_id: str | None
    paths: dict[str, Path]
    rel: dict[str, str]
    brief: str

    def relative(self, path: Path) -> str:
        """`path` as the run's documents write it (see `relative`)."""
        return relative(path, self.project_root)


def relative(path: Path, root: Path) -> str:
    """`path` relative to the project `root` (POSIX spelling), else absolute."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)
