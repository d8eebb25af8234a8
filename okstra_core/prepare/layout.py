"""Where one run's files go (`RunLayout`): shared by every builder of the run's documents."""

from __future__ import annotations

from pathlib import Path

from ..records import config, dataclass


@dataclass(frozen=True, kw_only=True)
class RunPaths:
    """Each file of one run and where it goes (camelCase in the documents' `paths`)."""

    __pydantic_config__ = config(camel_case=True)

    run_inputs: Path
    run_manifest: Path
    lead_prompt: Path
    lead_prompt_meta: Path
    resume: Path
    resume_script: Path
    task_manifest: Path
    task_index: Path
    timeline: Path


@dataclass(frozen=True, kw_only=True)
class RunLayout:
    """Where one run's files go, and the facts every document of the run shares.

    `rel` is `paths` relative to the project, by camelCase name; `now` is ISO 8601 to the
    second; `mcp_tools`: the lead's CLI is given okstra's MCP server of the run.
    """

    run_id: str
    seq: int
    run_dir: Path
    project_root: Path
    now: str
    session_id: str | None
    paths: RunPaths
    rel: dict[str, str]
    brief: str
    mcp_tools: bool = False

    def relative(self, path: Path) -> str:
        """`path` as the run's documents write it (see `relative`)."""
        return relative(path, self.project_root)

    @property
    def run_manifest(self) -> str:
        """The run manifest, as the run's documents write it."""
        return self.relative(self.paths.run_manifest)


def relative(path: Path, root: Path) -> str:
    """`path` relative to the project `root` (POSIX spelling), else absolute."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)
