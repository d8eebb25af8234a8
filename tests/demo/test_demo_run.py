"""`okstra demo` end to end: a fresh copy of the demo project, the demo team launched
through the installed `okstra` command, followed to its end — in the background and in
real tmux. No agent CLI is on PATH; the demo agent runs with no pause between steps."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from tests.conftest import okstra_cmd

# OKSTRA_TRUSTED_DIRECTORIES too: the demo's copy must be trusted by `okstra demo` itself.
_DROPPED = (
    "TMUX", "TMUX_PANE", "OKSTRA_TMUX_SOCKET", "TMUX_TMPDIR", "OKSTRA_DEMO_SURFACE",
    "OKSTRA_TRUSTED_DIRECTORIES",
)  # fmt: skip


@pytest.fixture
def env() -> dict[str, str]:
    kept = {k: v for k, v in os.environ.items() if k not in _DROPPED}
    return {**kept, "PATH": "/usr/bin:/bin", "OKSTRA_DEMO_STEP_SECONDS": "0"}


def _okstra(env: dict[str, str], *args: str, cwd: Path | None = None) -> tuple[int, str, str]:
    done = subprocess.run(
        [*okstra_cmd(), *args], env=env, cwd=cwd, capture_output=True, text=True,
        stdin=subprocess.DEVNULL, timeout=180, check=False,
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout, done.stderr


def _finished(env: dict[str, str], project: Path, out: str, *, tools: bool) -> Path:
    """The run finished as `okstra demo` says: every worker exited 0, the report checks.

    With okstra's MCP tools the lead writes the report's data where its prompt says, a
    file of the project (`report_finalize` takes no other); else in the run's directory.
    """
    run_dir = next((project / ".okstra" / "tasks" / "demo" / "top-words" / "runs").iterdir())
    assert (run_dir / "mcp.json").is_file() is tools
    report = (
        project / f"final-report-{run_dir.name}.json" if tools else run_dir / "final-report.json"
    )
    assert f"okstra demo: the report: {report}" in out
    assert out.rstrip().endswith("okstra demo: the team finished")
    code, status, _ = _okstra(env, "worker", "status", str(run_dir), "--json")
    members = orjson.loads(status)["workers"]
    workers = [m for m in members if not m["leader"]]
    assert [m["short"] for m in workers] == ["analyser#1", "analyser#2", "report-writer#1"]
    assert {m["status"] for m in workers} == {"exited 0"}
    code, _, err = _okstra(env, "report", "check", str(run_dir), str(report))
    assert code == 0, err
    assert "# Report" in (run_dir / "final-report.md").read_text("utf-8")
    return run_dir


def test_the_demo_in_the_background(env: dict[str, str], tmp_path: Path) -> None:
    project = tmp_path / "demo-copy"
    code, out, err = _okstra(env, "demo", str(project), "--surface", "background")
    assert code == 0, out + err
    assert out.startswith(f"okstra demo: the demo project is {project}\n")
    run_dir = _finished(env, project, out, tools=True)
    # okstra made the project, so okstra trusted it (nothing else trusts it here).
    code, listed, _ = _okstra(env, "trust", "--list", "--json")
    assert code == 0 and str(project.resolve()) in listed, listed
    # Without a terminal the lead ends after the report, its status recorded.
    code, status, _ = _okstra(env, "status", str(run_dir), "--json")
    assert orjson.loads(status)["lead"]["label"] == "exited 0"
    # The lead drove its team through okstra's MCP server, each tool call in its output.
    shown = (run_dir / "lead-output.log").read_text("utf-8")
    assert "Done: 3 results, report finalized and checked." in shown
    assert "MCP server okstra connected" in shown
    for call in (
        'okstra - worker_start (MCP)(who: "role-exec-analyser-001"',
        'okstra - worker_wait (MCP)(who: ["role-exec-analyser-001", "role-exec-analyser-002"])',
        'okstra - worker_result (MCP)(who: "role-exec-report-writer-001")',
        "okstra - report_finalize (MCP)(data: ",
    ):
        assert call in shown, shown
    assert "Bash(okstra worker" not in shown and "Bash(okstra report finalize" not in shown
    # A second demo into the same directory is refused; nothing is changed.
    code, _, err = _okstra(env, "demo", str(project), "--surface", "background")
    assert code == 2 and "exists already" in err


@pytest.fixture
def tmux_env(env: dict[str, str]) -> Iterator[dict[str, str]]:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (apt-get install tmux)")
    tmux_dir = Path(tempfile.mkdtemp(prefix="okd-"))
    socket = f"d{uuid.uuid4().hex[:10]}"
    yield {**env, "TMUX_TMPDIR": str(tmux_dir), "OKSTRA_TMUX_SOCKET": socket}
    subprocess.run(
        ["tmux", "-L", socket, "kill-server"],
        env={"TMUX_TMPDIR": str(tmux_dir), "PATH": "/usr/bin:/bin"},
        capture_output=True, check=False,
    )  # fmt: skip
    shutil.rmtree(tmux_dir, ignore_errors=True)


@pytest.mark.tmux
def test_the_demo_in_tmux(tmux_env: dict[str, str], tmp_path: Path) -> None:
    project = tmp_path / "demo-copy"
    # Without okstra's MCP server the lead drives its team with okstra's commands.
    code, out, err = _okstra(tmux_env, "demo", str(project), "--surface", "tmux", "--no-mcp")
    assert code == 0, out + err
    run_dir = _finished(tmux_env, project, out, tools=False)
    # On its terminal (a tmux pane) the lead waits at its prompt.
    assert "okstra demo: the lead waits at its prompt — see it: okstra attach" in out
    code, status, _ = _okstra(tmux_env, "status", str(run_dir))
    assert "waiting for input" in status, status
    code, _, err = _okstra(tmux_env, "stop", str(run_dir), "--grace", "5")
    assert code == 0, err


def test_the_readme_command_opens_the_app_on_demo_not_the_demo_command() -> None:
    from okstra_core.cli._app import command_word

    # README command 1: `okstra --project-root demo` — `demo` is the option's value.
    assert command_word(["--project-root", "demo"]) is None
    assert command_word(["--launch", "tmux", "--project-root", "demo"]) is None
    assert command_word(["demo", "/tmp/copy", "--surface", "background"]) == "demo"
    assert command_word(["--project-root", "demo", "runs"]) == "runs"
