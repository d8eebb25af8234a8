"""Helpers of the second compatibility round's tests: run the installed `okstra`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson


def okstra(*args: str, env: dict[str, str] | None = None) -> tuple[Any, int, str]:
    """Run the installed `okstra`: (stdout JSON, exit code, stderr)."""
    exe = Path(sys.executable).parent / "okstra"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "okstra_tui"]
    done = subprocess.run(
        [*cmd, *args],
        capture_output=True,
        env={**os.environ, **(env or {})},
        timeout=90,
        check=False,
    )
    stderr = done.stderr.decode()
    assert done.stdout, stderr
    return orjson.loads(done.stdout), done.returncode, stderr


def make_project(root: Path) -> Path:
    """A project directory with a brief."""
    (root / "docs").mkdir(parents=True, exist_ok=True)
    (root / "docs" / "brief.md").write_text("# Guest checkout\n\nFind what breaks.\n")
    return root


def prepare_line(project: Path, *extra: str, task_type: str = "error-analysis") -> list[str]:
    """`okstra prepare` flags for a dry run of a new task in `project`."""
    return [
        "prepare",
        "--project-root",
        str(project),
        "--task-type",
        task_type,
        "--brief",
        "docs/brief.md",
        "--task-group",
        "checkout",
        "--task-id",
        "chk-1",
        "--launch",
        "none",
        "--dry-run",
        *extra,
    ]


def labels(payload: dict[str, Any]) -> dict[str, str]:
    """role#n → model ref of a prepare result's team."""
    return {f"{m['role']}#{m['ordinal']}": m["modelRef"] for m in payload["team"]}


def snapshot(path: Path) -> tuple[bytes, int, int]:
    """A file's bytes, mtime and inode (for the byte-identical checks)."""
    st = path.stat()
    return path.read_bytes(), st.st_mtime_ns, st.st_ino
