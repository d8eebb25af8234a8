"""The runs screen's live team: every member in a table that refreshes by itself, the
highlighted member's last lines, and its actions (attach, stop, follow-up).

The workers are the fake worker CLI of the worker tests (its prompt says what it
does), started in process through the core, as the lead would start them: no key is
pressed in the app for what it must show by itself.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Static
from tui_support import settle, wait_for

from okstra_core.cli.roleargs import request_from_argv
from okstra_core.environment import Environment
from okstra_core.life.actions import worker_start
from okstra_core.prepare import prepare
from okstra_tui.screens.dialog import AskScreen, SendScreen
from okstra_tui.screens.runs import RunsScreen
from okstra_tui.team_view import MemberRow, table_diff
from tests.life.worker_support import fake, make_worker_clis

SIZE = (120, 40)


@pytest.fixture
def run_dir(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A run of two analysers, with the fake worker CLIs first on PATH."""
    bin_dir = make_worker_clis(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    for name in ("TMUX", "TMUX_PANE"):
        monkeypatch.delenv(name, raising=False)
    argv = [
        "--project-root", str(project), "--task-group", "perf", "--task-id", "live",
        "--task-type", "requirements-discovery", "--brief", "brief.md", "--host", "terminal",
        "--role-count", "analyser=2",
    ]  # fmt: skip
    env = Environment.real()
    return Path(prepare(request_from_argv(argv, env), launch="none", environment=env).run_dir)


def start(run_dir: Path, who: str, prompt: str) -> None:
    worker_start(run_dir, Environment.real(), prompt=prompt, who=who, surface="background")


def cell(screen: RunsScreen, short: str, column: str) -> str:
    """The members table's cell of `short` (empty while it is not shown)."""
    member = next((m for m in screen.members.values() if m.short == short), None)
    if member is None or member.key not in screen.member_cells:
        return ""
    table = screen.query_one("#members", DataTable)
    return str(table.get_cell(member.key, column))


def shown(screen: RunsScreen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


async def open_runs(pilot: Any, app: Any) -> RunsScreen:
    await settle(pilot, app)
    app.show_runs()
    await wait_for(pilot, app, lambda: isinstance(app.screen, RunsScreen), "runs screen")
    screen = app.screen
    assert isinstance(screen, RunsScreen)
    await wait_for(pilot, app, lambda: screen.team_revision > 0, "the team shown")
    return screen


async def to_member(pilot: Any, screen: RunsScreen, short: str) -> None:
    """Focus the members table and put its cursor on `short`."""
    table = screen.query_one("#members", DataTable)
    await pilot.press("tab")
    assert table.has_focus
    keys = list(screen.member_cells)
    index = next(i for i, k in enumerate(keys) if screen.members[k].short == short)
    table.move_cursor(row=index)
    await wait_for(pilot, screen.app, lambda: short in shown(screen, "#preview-title"), short)


async def test_a_worker_started_after_the_screen_opened_shows_with_no_key(
    app_factory, run_dir: Path, tmp_path: Path
) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_runs(pilot, app)
        # Every member, the lead first.
        shorts = [screen.members[k].short for k in screen.member_cells]
        assert (
            shorts[1:] == ["analyser#1", "analyser#2", "report-writer#1"]
            and screen.members[next(iter(screen.member_cells))].leader
        )
        assert cell(screen, "analyser#1", "state") == "prepared"
        await to_member(pilot, screen, "analyser#1")
        revision = screen.team_revision
        hold = tmp_path / "release"
        start(run_dir, "analyser#1", fake("Look.", hold=str(hold), say=["thinking hard"]))
        # No key pressed from here on: the table and the preview follow the worker.
        await wait_for(
            pilot, app, lambda: cell(screen, "analyser#1", "state") == "running", "running"
        )
        assert screen.team_revision > revision
        assert cell(screen, "analyser#1", "model") != "-"
        await wait_for(
            pilot, app, lambda: "thinking hard" in shown(screen, "#preview"), "the log's lines"
        )
        assert "output log" in shown(screen, "#preview-title")
        hold.write_text("go")
        await wait_for(
            pilot, app, lambda: cell(screen, "analyser#1", "state") == "exited 0", "its end"
        )
        assert cell(screen, "analyser#2", "state") == "prepared"


async def test_stop_asks_first_and_stops_the_worker(app_factory, run_dir: Path) -> None:
    start(run_dir, "analyser#1", fake("Wait.", waitSignal=True, say=["waiting"]))
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_runs(pilot, app)
        await wait_for(
            pilot, app, lambda: cell(screen, "analyser#1", "state") == "running", "running"
        )
        await to_member(pilot, screen, "analyser#1")
        await pilot.press("s")
        await wait_for(pilot, app, lambda: isinstance(app.screen, AskScreen), "the question")
        assert "Stop analyser#1?" in str(app.screen.query_one("#question", Static).render())
        await pilot.press("n")  # kept running
        await wait_for(pilot, app, lambda: app.screen is screen, "the question closed")
        await settle(pilot, app)
        assert cell(screen, "analyser#1", "state") == "running"
        await pilot.press("s")
        await wait_for(pilot, app, lambda: isinstance(app.screen, AskScreen), "the question")
        await pilot.press("y")
        await wait_for(
            pilot, app, lambda: cell(screen, "analyser#1", "state") == "stopped", "stopped"
        )
        await wait_for(
            pilot, app, lambda: "analyser#1 is now: stopped" in shown(screen, "#detail"), "said"
        )


async def test_a_follow_up_is_sent_to_an_ended_worker_or_refused_inline(
    app_factory, run_dir: Path, tmp_path: Path
) -> None:
    from okstra_core.life.actions import worker_wait

    start(run_dir, "analyser#1", fake("First."))
    worker_wait(run_dir, Environment.real(), ["analyser#1"], timeout=60)
    hold = tmp_path / "release"
    start(run_dir, "analyser#2", fake("Busy.", hold=str(hold)))
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_runs(pilot, app)
        # A running worker takes no follow-up: the core refuses, the screen says why.
        await to_member(pilot, screen, "analyser#2")
        await pilot.press("f")
        await wait_for(pilot, app, lambda: isinstance(app.screen, SendScreen), "the dialog")
        await pilot.press(*"again", "enter")
        await wait_for(
            pilot, app, lambda: "still running" in shown(screen, "#detail"), "the refusal"
        )
        hold.write_text("go")
        # An ended one continues its own session: a new turn runs, then ends.
        await to_member_again(pilot, screen, "analyser#1")
        await pilot.press("f")
        await wait_for(pilot, app, lambda: isinstance(app.screen, SendScreen), "the dialog")
        await pilot.press(*"again", "enter")
        await wait_for(pilot, app, lambda: "Follow-up sent" in shown(screen, "#detail"), "sent")
        await wait_for(
            pilot, app, lambda: "RESULT: again" in shown(screen, "#preview"), "the new turn"
        )


async def to_member_again(pilot: Any, screen: RunsScreen, short: str) -> None:
    table = screen.query_one("#members", DataTable)
    keys = list(screen.member_cells)
    table.move_cursor(row=next(i for i, k in enumerate(keys) if screen.members[k].short == short))
    await wait_for(pilot, screen.app, lambda: short in shown(screen, "#preview-title"), short)


async def test_attach_to_a_background_worker_says_why_not(app_factory, run_dir: Path) -> None:
    start(run_dir, "analyser#1", fake("Done."))
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_runs(pilot, app)
        await to_member(pilot, screen, "analyser#1")
        await pilot.press("a")
        await wait_for(
            pilot, app, lambda: "runs in the background" in shown(screen, "#detail"), "why not"
        )
        assert app.screen is screen  # the app stays
        # The lead was never launched: the lead's row says so too.
        await to_member_again(pilot, screen, screen.members[next(iter(screen.member_cells))].short)
        await pilot.press("a")
        await wait_for(pilot, app, lambda: "never launched" in shown(screen, "#detail"), "lead")


@pytest.mark.tmux
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
async def test_attach_to_a_tmux_worker_hands_the_terminal_to_its_pane(
    app_factory, run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tmux_dir = Path(tempfile.mkdtemp(prefix="okv-"))  # a socket path is short
    socket = f"v{uuid.uuid4().hex[:10]}"
    monkeypatch.setenv("TMUX_TMPDIR", str(tmux_dir))
    monkeypatch.setenv("OKSTRA_TMUX_SOCKET", socket)
    try:
        hold = tmp_path / "release"
        started = worker_start(
            run_dir, Environment.real(), prompt=fake("Look.", hold=str(hold)), who="analyser#1",
            surface="tmux",
        )  # fmt: skip
        assert started.pane_ref
        app = app_factory()
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_runs(pilot, app)
            await wait_for(
                pilot, app, lambda: cell(screen, "analyser#1", "state") == "running", "running"
            )
            await to_member(pilot, screen, "analyser#1")
            await pilot.press("a")
            await wait_for(pilot, app, lambda: app.return_value is not None, "the app handing over")
        request = app.return_value
        # Outside tmux: this terminal becomes a client of the worker's pane.
        assert "attach-session" in request.argv and started.pane_ref in request.argv
        assert socket in " ".join(request.argv)
        hold.write_text("go")
    finally:
        subprocess.run(
            ["tmux", "-L", socket, "kill-server"],
            env={"TMUX_TMPDIR": str(tmux_dir), "PATH": "/usr/bin:/bin"},
            capture_output=True,
            check=False,
        )
        shutil.rmtree(tmux_dir, ignore_errors=True)


def _row(key: str, *cells: str) -> MemberRow:
    return MemberRow(key=key, short=key, leader=False, ended=False, tmux=False, cells=cells)


def test_the_diff_writes_only_what_changed() -> None:
    before = {"a": ("a", "1"), "b": ("b", "1"), "c": ("c", "1")}
    same = table_diff(before, (_row("a", "a", "1"), _row("b", "b", "1"), _row("c", "c", "1")))
    assert same.empty
    # b's second cell changed, c ended up gone, d is new: appended.
    diff = table_diff(before, (_row("a", "a", "1"), _row("b", "b", "2"), _row("d", "d", "1")))
    assert diff.remove == ("c",) and diff.update == (("b", 1, "2"),) and not diff.rebuild
    assert [r.key for r in diff.add] == ["d"]
    # Another order: the table is rebuilt.
    moved = table_diff(before, (_row("b", "b", "1"), _row("a", "a", "1"), _row("c", "c", "1")))
    assert moved.rebuild
