"""`okstra demo`: a whole team at work on the shipped demo project, no agent CLI needed."""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Literal

from .environment import Environment
from .errors import OkstraError, UsageError
from .life.actions import team_status
from .life.foreground import run_foreground
from .life.report import check_report, read_run_manifest
from .life.workers.observe import WorkerState
from .paths import bundled_demo_root
from .prepare.lead_prompt import FINAL_REPORT
from .prepare.pipeline import prepare
from .records import dataclass
from .request import HostSessionContext, RunRequest
from .trust import trust_project

Surface = Literal["tmux", "background"]
SURFACES: tuple[Surface, ...] = ("tmux", "background")
# The final report's data in the run's directory, for a lead without okstra's MCP tools.
DEMO_REPORT = "final-report.json"
# The demo agent's own setting: where its lead starts workers (`--surface`).
SURFACE_ENV = "OKSTRA_DEMO_SURFACE"
FOLLOW_SECONDS = 600.0
_POLL = 0.25


@dataclass(frozen=True)
class DemoRun:
    """How a demo went (`lead_status` None: the lead still waits at its prompt)."""

    project: Path
    run_dir: Path
    report: Path
    members: tuple[WorkerState, ...]
    report_ok: bool
    lead_status: int | None

    @property
    def ok(self) -> bool:
        """Every worker exited 0, the lead did not fail, the report checks."""
        workers = [m for m in self.members if not m.leader]
        exited = all(m.state == "exited" and m.exit_status == 0 for m in workers)
        return bool(workers) and exited and self.report_ok and self.lead_status in (None, 0)


def copy_demo(target: Path | None) -> Path:
    """Copy the shipped demo project into a new `target` or a fresh one (`UsageError`)."""
    source = bundled_demo_root()
    if target is None:
        project = Path(tempfile.mkdtemp(prefix="okstra-demo-")) / "wordfreq"
    else:
        project = target.expanduser().absolute()
        if project.exists() or project.is_symlink():
            raise UsageError(f"{project} exists already: name a new directory", field="DIR")
    ignore = shutil.ignore_patterns("__pycache__", ".okstra", "*.pyc")
    shutil.copytree(source, project, ignore=ignore)
    defaults = source / ".okstra" / "project.json"
    (project / ".okstra").mkdir()
    shutil.copyfile(defaults, project / ".okstra" / "project.json")
    return project


def demo_request(project: Path) -> RunRequest:
    """The demo's run; its team is what the wizard's defaults give on `demo/`."""
    return RunRequest(
        project_root=project,
        task_group="demo",
        task_id="top-words",
        task_type="requirements-discovery",
        brief="brief.md",
        host=HostSessionContext(host_id="terminal"),
    )


def _shown(member: WorkerState) -> str:
    activity = f" · {member.activity}" if member.activity and not member.ended else ""
    return f"{member.status}{activity}"


class _Follower:
    """Says each member's state when it changes."""

    def __init__(self, run_dir: Path, environment: Environment, say: Callable[[str], None]):
        self.run_dir = run_dir
        self.environment = environment
        self.say = say
        self.seen: dict[str, str] = {}
        self.members: tuple[WorkerState, ...] = ()

    def look(self) -> tuple[WorkerState, ...]:
        self.members = team_status(self.run_dir, self.environment).workers
        for member in self.members:
            shown = _shown(member)
            if self.seen.get(member.role_execution_ref) != shown:
                self.seen[member.role_execution_ref] = shown
                self.say(f"okstra demo:   {member.label}: {shown}")
        return self.members

    def until(self, done: Callable[[Sequence[WorkerState]], bool], seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while not done(self.look()):
            if time.monotonic() > deadline:
                return False
            time.sleep(_POLL)
        return True


def report_file(project: Path, run_dir: Path) -> Path:
    """Where the demo lead wrote the final report's data (the project's file with MCP tools)."""
    with_tools = project / FINAL_REPORT.format(run_id=run_dir.name)
    return with_tools if with_tools.is_file() else run_dir / DEMO_REPORT


def _report_ok(project: Path, run_dir: Path) -> bool:
    report = report_file(project, run_dir)
    if not report.is_file():
        return False
    try:
        check_report(read_run_manifest(run_dir)[1], report)
    except OkstraError:
        return False
    return True


def _background(
    run_dir: Path, argv: Sequence[str], env: dict[str, str], project: Path,
    environment: Environment, follower: _Follower,
) -> int:  # fmt: skip
    """Run the lead without a terminal, following the team; its exit status."""
    stop = threading.Event()
    watcher = threading.Thread(target=lambda: follower.until(lambda _: stop.is_set(), 1e9))
    watcher.start()
    try:
        code, _ = run_foreground(
            run_dir, argv, env, project, environment,
            say=follower.say, output=run_dir / "lead-output.log",
        )  # fmt: skip
    finally:
        stop.set()
        watcher.join()
    follower.look()
    return code


def _settled(project: Path, run_dir: Path) -> Callable[[Sequence[WorkerState]], bool]:
    def done(members: Sequence[WorkerState]) -> bool:
        lead = next((m for m in members if m.leader), None)
        if lead is not None and lead.ended:
            return True
        workers = [m for m in members if not m.leader]
        return all(m.ended for m in workers) and _report_ok(project, run_dir)

    return done


def run_demo(
    target: Path | None,
    *,
    surface: Surface,
    environment: Environment,
    say: Callable[[str], None],
    mcp: bool | None = None,
) -> DemoRun:
    """Copy, trust, prepare, launch and follow the demo; how it went."""
    if surface not in SURFACES:
        raise UsageError(f"unknown surface {surface!r}: expected tmux or background")
    project = copy_demo(target)
    say(f"okstra demo: the demo project is {project}")
    trust_project(project, environment.env)
    env = replace(environment, env={**environment.env, SURFACE_ENV: surface}, probe_override=None)
    launch = "tmux" if surface == "tmux" else "exec"
    result = prepare(demo_request(project), launch=launch, environment=env, mcp=mcp)
    run_dir = Path(result.run_dir)
    say(f"okstra demo: run {result.run_id} with the demo team (scripted, no model):")
    follower = _Follower(run_dir, env, say)
    lead_status: int | None = None
    if surface == "background" and result.exec_argv:
        exec_env = dict(result.exec_env or os.environ)
        lead_status = _background(run_dir, list(result.exec_argv), exec_env, project, env, follower)
    elif not follower.until(_settled(project, run_dir), FOLLOW_SECONDS):
        say(f"okstra demo: the team did not finish within {FOLLOW_SECONDS:.0f} s")
    lead = next((m for m in follower.members if m.leader), None)
    if lead is not None and lead.ended:
        lead_status = lead.exit_status if lead.exit_status is not None else 1
    return DemoRun(
        project=project,
        run_dir=run_dir,
        report=report_file(project, run_dir),
        members=follower.members,
        report_ok=_report_ok(project, run_dir),
        lead_status=lead_status,
    )
