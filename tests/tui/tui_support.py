"""Fixtures of the terminal-app tests: a scratch project, a fixed clock, the app factory.

Everything runs against the real wizard engine and real state files (OKSTRA_HOME is
a temp dir, see tests/conftest.py); provider CLIs are the fake ones on PATH.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from okstra_core.environment import Environment

if TYPE_CHECKING:
    from okstra_tui.app import OkstraApp

FIXED_NOW = datetime(2026, 1, 15, 9, 30, tzinfo=UTC)


def fixed_environment(now: datetime = FIXED_NOW) -> Environment:
    """The process environment with a fixed clock and a deterministic uuid source."""
    counter = iter(range(1, 1_000_000))
    return Environment(
        env=dict(os.environ),
        now=lambda: now,
        new_uuid=lambda: uuid.UUID(int=next(counter)),
    )


def make_project(root: Path) -> Path:
    """A scratch project with a brief file at `brief.md`."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "brief.md").write_text("# Brief\n\nMake the frobnicator faster.\n", encoding="utf-8")
    return root


@pytest.fixture
def project(tmp_path: Path, fake_path: Path) -> Path:
    """A scratch project (fake provider CLIs on PATH)."""
    return make_project(tmp_path / "proj")


@pytest.fixture
def stable_project(fake_path: Path, request: pytest.FixtureRequest) -> Iterator[Path]:
    """A project at a fixed path, so paths shown on screen are the same every run.

    The path (one per test function) is shared by every checkout on the machine and
    by the test's sizes: a lock beside it makes two users at once (two worktrees, two
    CI jobs, the 80x24 and 120x40 cases on two workers) take turns instead of removing
    each other's project. Other tests' projects have their own locks, so the workers
    of one run do not wait for each other.
    """
    base = Path("/tmp/okstra-tui-snapshots")
    root = base / request.node.name.split("[")[0][:40] / "proj"
    base.mkdir(exist_ok=True)
    fd = os.open(f"{root.parent}.lock", os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        shutil.rmtree(root.parent, ignore_errors=True)
        yield make_project(root)
        shutil.rmtree(root.parent, ignore_errors=True)
    finally:
        os.close(fd)  # releases the lock


@pytest.fixture
def app_factory(project: Path) -> Callable[..., OkstraApp]:
    """Build the app the way the CLI does, with a fixed clock and a frozen cursor."""

    def build(**kwargs: Any) -> OkstraApp:
        from okstra_tui.app import make_app

        kwargs.setdefault("project_root", project)
        kwargs.setdefault("environment", fixed_environment())
        kwargs.setdefault("cursor_blink", False)
        kwargs.setdefault("host", "terminal")
        return make_app(**kwargs)

    return build


# Every flag okstra's preflight asks the bundled leader CLIs for (see prompts/providers).
FAKE_HELP = (
    "usage: cli [--session-id ID] [--model M] [--no-daemon] [--config K=V]"
    " [--prompt-interactive P] [--prompt-file F] [prompt]"
)

ANSWERS = {"task_group": "grp", "task_id": "one", "brief": "brief.md"}


# What tells the doctor a CLI is logged in (prompts/providers `[login]`): kept out of the
# tests' environment, so what the start screen's doctor line says is the same anywhere.
LOGIN_ENV = (
    "ANTHROPIC_API_KEY",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "ANTHROPIC_AUTH_TOKEN",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_GENAI_USE_GCA",
)


@pytest.fixture(autouse=True)
def _fake_cli_help(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Fake CLIs that pass preflight; no CLI logins but the Gemini CLI's cached one
    (tests/conftest.py): a CLI known to be logged out is not ready, and its models not
    available. A test that reads the fakes' call log sets `FAKE_CLI_LOG` itself (with
    it, every check runs the fake's Python body instead of its shell front)."""
    monkeypatch.setenv("FAKE_CLI_HELP", FAKE_HELP)
    monkeypatch.delenv("FAKE_CLI_LOG", raising=False)
    for name in LOGIN_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "no-claude-login"))


@pytest.fixture(autouse=True)
def _quick_arming(monkeypatch: pytest.MonkeyPatch) -> None:
    """Guarded screens arm 20 ms after their first paint instead of 0.4 s: the tests
    wait for `armed` (the screen's own signal), so only the wait is shorter. The delay
    itself is tested in test_tui_safety.py, and the key bursts and the tmux tests run
    the app with its real delay."""
    from okstra_tui.screens.base import GuardedScreen

    monkeypatch.setattr(GuardedScreen, "ARM_DELAY", QUICK_ARM_DELAY)


QUICK_ARM_DELAY = 0.02


@pytest.fixture(autouse=True)
def _okstra_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The app runs as `pytest` here, not as an okstra command: the start screen's line
    of how to run okstra elsewhere says `okstra`, as it does for an okstra on PATH, on
    every machine. How that command is chosen is tested in tests/core."""
    from okstra_core.environment import Environment

    monkeypatch.setattr(Environment, "okstra_command", lambda *_a, **_k: "okstra")


def _product_arm_delay() -> float:
    from okstra_tui.screens.base import GuardedScreen

    return GuardedScreen.ARM_DELAY


REAL_ARM_DELAY = _product_arm_delay()  # read before any test patches it


async def settle(pilot: Any, app: Any) -> None:
    """Let screen switches and workers finish.

    `pilot.pause()` already waits until the app is idle (its CPU time stops moving),
    so one is enough for a screen switch; only a running worker (preflight, prepare)
    needs its own wait and one more pause for the message it posts.
    """
    from textual.worker import WorkerCancelled

    await pilot.pause()
    # A few rounds, not "until idle": the runs screen reloads its team on a timer. An
    # exclusive worker (that reload) is cancelled when its successor starts while we
    # wait: the app's normal flow, so wait for the successor instead of failing.
    for _ in range(5):
        running = [worker for worker in app.workers if worker.is_running]
        if not running:
            return
        for worker in running:
            with contextlib.suppress(WorkerCancelled):
                await worker.wait()
        await pilot.pause()


def columns_fitted(table: Any) -> bool:
    """Whether a DataTable has fitted its columns to the rows it holds (it does that on
    idle; a screenshot taken before shows the old widths). Wait on this, not on an idle
    pause alone: under load the app looks idle before its idle handlers ran."""
    return all(
        column.content_width >= max((len(str(cell)) for cell in table.get_column(key)), default=0)
        for key, column in table.columns.items()
    )


def titles_fitted(screen: Any) -> bool:
    """Whether every collapsible's title is laid out at its text's width: a new title
    (the confirm screen's preview, once the dry run is back) is measured on the next
    layout, and a screenshot taken before shows it cut."""
    from rich.cells import cell_len

    return all(
        title.size.width >= cell_len(title.content.plain)
        for title in screen.query("CollapsibleTitle")
    )


async def start_loaded(pilot: Any, app: Any) -> Any:
    """The start screen once its runs and its doctor line (read by workers) are shown."""
    from okstra_tui.screens.start import StartScreen

    await settle(pilot, app)
    screen = app.screen
    assert isinstance(screen, StartScreen)
    await wait_for(pilot, app, lambda: screen.runs_loaded, "the runs read")
    await wait_for(pilot, app, lambda: bool(screen.doctor_text), "the doctor line")
    await settle(pilot, app)
    return screen


async def wait_for(
    pilot: Any, app: Any, predicate: Callable[[], bool], what: str, timeout: float = 60.0
) -> None:
    """Poll `predicate` (20 ms apart) until it holds; fail after `timeout` seconds (a
    bound for a signal that never comes: a loaded machine takes its time, not a test's)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(
                f"timed out waiting for {what}; screen is {type(app.screen).__name__}"
            )
        await pilot.pause(0.02)


def step_kind(app: Any) -> str | None:
    prompt = getattr(app.screen, "prompt", None)
    return None if prompt is None else str(prompt.meta.get("stepKind", prompt.kind))


async def answer_current(pilot: Any, app: Any) -> None:
    """Answer the current prompt with its default (texts from ANSWERS when empty)."""
    kind = step_kind(app)
    prompt = app.screen.prompt
    if prompt.kind == "text":
        from textual.widgets import Input

        box = app.screen.query_one("#answer", Input)
        if not box.value:
            box.value = ANSWERS.get(str(kind), "x")
    before = prompt.id
    # Confirm launches with its own key only (Enter never launches there).
    await pilot.press("l" if kind == "confirm" else "enter")
    await wait_for(
        pilot,
        app,
        lambda: getattr(app.screen, "prompt", None) is None or app.screen.prompt.id != before,
        f"the prompt after {before}",
    )
    await settle(pilot, app)


async def drive_to(pilot: Any, app: Any, target: str, *, limit: int = 30) -> None:
    """Answer prompts with their defaults until the step kind `target` is shown."""
    await settle(pilot, app)
    if type(app.screen).__name__ == "StartScreen":
        await pilot.press("enter")
        await wait_for(pilot, app, lambda: step_kind(app) is not None, "the first prompt")
    for _ in range(limit):
        if step_kind(app) == target:
            await settle(pilot, app)
            await wait_armed(pilot, app)
            return
        await answer_current(pilot, app)
    raise AssertionError(f"never reached {target}; at {step_kind(app)}")


async def wait_armed(pilot: Any, app: Any) -> None:
    """On a guarded screen (confirm, a waiting launch screen), wait until it is armed.

    The screen says so itself (`armed`, set by its own timer after the first paint):
    only keys pressed after that act on it.
    """
    from okstra_tui.screens.base import GuardedScreen

    screen = app.screen
    if isinstance(screen, GuardedScreen):
        await wait_for(pilot, app, lambda: screen.armed, "the screen to be armed")
        await pilot.pause()


def default_answer(prompt: Any) -> str:
    """What Enter answers on a prompt's screen: the highlighted default, else the first
    selectable option; a text box's default, else its ANSWERS entry."""
    kind = str(prompt.meta.get("stepKind", prompt.kind))
    if prompt.kind == "text":
        return str(prompt.default or ANSWERS.get(kind, "x"))
    selectable = [o.value for o in prompt.options if o.selectable]
    return str(prompt.default if prompt.default in selectable else selectable[0])


def prefill(project: Path, target: str, **init: Any) -> Path:
    """A wizard answered through the engine, as Enter on each screen would, up to the
    first prompt of step kind `target`; returns its state file (the name "New setup"
    would give it: same clock).

    For tests about what happens *at* a step: driving every earlier screen through
    the UI costs a screen render per step and tests nothing new (the walk through the
    UI is its own test, and the tmux end-to-end test's).
    """
    from okstra_core.session import Wizard

    init.setdefault("host", "terminal")
    wizard = Wizard.init(None, project, environment=fixed_environment(), **init)
    for _ in range(40):
        prompt = wizard.prompt()
        if str(prompt.meta.get("stepKind", prompt.kind)) == target:
            return wizard.path
        wizard.submit(default_answer(prompt))
    raise AssertionError(f"never reached {target}; at {wizard.prompt().id}")


def prepared(project: Path, task_id: str) -> Any:
    """The result of preparing a run of task `perf/<task_id>` through the engine
    (nothing launched): its `run_id`, `run_dir`, …"""
    from okstra_core.cli.roleargs import request_from_argv
    from okstra_core.prepare import prepare

    argv = [
        "--project-root", str(project), "--task-group", "perf", "--task-id", task_id,
        "--task-type", "requirements-discovery", "--brief", "brief.md", "--host", "terminal",
    ]  # fmt: skip
    env = fixed_environment()
    return prepare(request_from_argv(argv, env), launch="none", environment=env)


def prepared_run(project: Path, task_id: str) -> Path:
    """The directory of a run of task `perf/<task_id>` prepared by the engine."""
    return Path(prepared(project, task_id).run_dir)


def okstra_cmd() -> list[str]:
    """The installed `okstra` command of the interpreter running the tests."""
    import sys

    exe = Path(sys.executable).parent / "okstra"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "okstra_tui"]
