"""The app's launch in tmux tells the truth: a lead that exits is the outcome on the
launch screen (with its last lines and what to do), not "started"; a lead that waits
for input is launched, and quitting then says how to attach and resume.

A real tmux server of the test's own; fake lead CLIs. The tests wait on okstra's own
signals (the launch screen's end, the app's state), never on sleeps of their own.
"""

from __future__ import annotations

import shutil
import stat
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.widgets import Static
from tui_support import FAKE_HELP, drive_to, prefill, settle, wait_for

from okstra_tui.screens.launch import LaunchScreen
from okstra_tui.screens.runs import RunsScreen
from okstra_tui.widgets import PreflightView
from tests.conftest import dying_lead

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]
SIZE = (110, 40)
DYING_LEAD = dying_lead(FAKE_HELP)


@pytest.fixture
def socket(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    name = f"okstra-tui-watch-{uuid.uuid4().hex[:10]}"
    monkeypatch.setenv("OKSTRA_TMUX_SOCKET", name)
    # A bound no start here reaches: each watch ends on the lead's own signal.
    monkeypatch.setenv("OKSTRA_LAUNCH_WATCH", "60")
    yield name
    subprocess.run(["tmux", "-L", name, "kill-server"], capture_output=True, check=False)


def _result(app) -> str:  # type: ignore[no-untyped-def]
    return str(app.screen.query_one("#result", Static).render())


async def _launch(app, pilot) -> None:  # type: ignore[no-untyped-def]
    await drive_to(pilot, app, "confirm")
    # The confirm screen's preflight has answered (its dry run, in a worker).
    view = app.screen.query_one(PreflightView)
    await wait_for(pilot, app, lambda: "leader#1" in str(view.render()), "preflight", 60)
    await pilot.press("l")
    await wait_for(pilot, app, lambda: isinstance(app.screen, LaunchScreen), "launch")
    await wait_for(pilot, app, lambda: app.screen.finished, "prepare's end", timeout=60)
    await settle(pilot, app)


async def test_a_lead_that_exits_is_the_outcome(
    app_factory, project: Path, fake_path: Path, socket: str
) -> None:
    claude = fake_path / "claude"
    claude.write_text(DYING_LEAD, encoding="utf-8")
    claude.chmod(claude.stat().st_mode | stat.S_IXUSR)
    app = app_factory(launch="tmux", state=prefill(project, "confirm"))
    async with app.run_test(size=SIZE) as pilot:
        await _launch(app, pilot)
        shown = _result(app)
        assert "Launch failed — the lead exited 1 after" in shown, shown
        assert "Please run /login" in shown and "okstra doctor" in shown
        assert "okstra resume requirements-discovery-001 --exec" in shown
        assert "Lead session started" not in shown
        # The app stays on the outcome; nothing to print on quitting but the setup.
        assert app.return_value is None and app.launched_run is None
        await pilot.press("enter")  # the run, with its status and actions
        await wait_for(pilot, app, lambda: isinstance(app.screen, RunsScreen), "the run")


async def test_a_lead_waiting_for_input_is_launched_and_quitting_says_how_to_attach(
    app_factory, project: Path, socket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_CLI_SAY", "❯ Try something")
    monkeypatch.setenv("FAKE_CLI_LINGER", "120")
    app = app_factory(launch="tmux", state=prefill(project, "confirm"))
    async with app.run_test(size=SIZE) as pilot:
        await _launch(app, pilot)
        shown = _result(app)
        assert "Lead session started in tmux window grp-one:0" in shown, shown
        said = app.launched_run or ""
        assert "tmux window grp-one:0" in said
        assert "okstra attach " in said and "--exec" in said
        assert "requirements-discovery-001" in said
