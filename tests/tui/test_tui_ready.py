"""The ready file (`OKSTRA_READY_FILE`): Pilot tests of what the app writes, and when.

The real-terminal tests synchronise on it (tests/tui/tmux_driver.py); here each kind
of line is checked against the app's own state at the moment it is written.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input
from tui_support import fixed_environment, prefill, settle, wait_for

from okstra_tui.ready_lines import ENV_VAR, ReadyFile

SIZE = (100, 40)


def lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def with_ready_file(monkeypatch: pytest.MonkeyPatch, path: Path) -> Any:
    monkeypatch.setenv(ENV_VAR, str(path))
    return fixed_environment()


async def next_line(pilot: Any, app: Any, path: Path, count: int) -> dict[str, Any]:
    """Wait until the ready file has `count` lines; return line `count`.

    A later line may already be there (a fast prepare writes the launch screen's line and
    its outcome back to back), so line `count` is returned, not the last one.
    """
    await wait_for(pilot, app, lambda: len(lines(path)) >= count, f"ready line {count}", timeout=60)
    found = lines(path)
    assert [line["seq"] for line in found[:count]] == list(range(1, count + 1)), found
    return found[count - 1]


async def test_a_line_per_ready_screen_refusal_and_focus_move(
    app_factory: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ready = tmp_path / "ready.jsonl"
    app = app_factory(environment=with_ready_file(monkeypatch, ready))
    async with app.run_test(size=SIZE) as pilot:
        start = await next_line(pilot, app, ready, 1)
        assert start == {
            "seq": 1,
            "pid": os.getpid(),
            "screen": "start",
            "step": None,
            "revision": None,
            "focus": "wizards",
        }
        await pilot.press("enter")
        pick = await next_line(pilot, app, ready, 2)
        # Written once the screen's own focus is set: keys sent now reach the options.
        assert (pick["screen"], pick["step"], pick["focus"]) == (
            "task_pick",
            "task_pick",
            "options",
        )
        assert app.screen.focused is not None and app.screen.focused.id == "options"
        state = json.loads(app.wizard.path.read_text(encoding="utf-8"))
        assert pick["revision"] == state["revision"] == app.wizard.state.revision

        await pilot.press("enter")
        group = await next_line(pilot, app, ready, 3)
        assert (group["screen"], group["step"], group["focus"]) == (
            "task_group",
            "task_group",
            "answer",
        )
        assert group["revision"] == pick["revision"] + 1

        # A refused answer: same screen, same revision, the message.
        await pilot.press("enter")  # empty
        refused = await next_line(pilot, app, ready, 4)
        assert refused["step"] == "task_group" and refused["revision"] == group["revision"]
        assert refused["error"]
        assert app.screen.query_one("#answer", Input).has_class("-invalid")

        # Focus moved within a ready screen: a line saying where keys go now.
        await pilot.press("ctrl+r")  # the history panel's key (Tab never goes there)
        moved = await next_line(pilot, app, ready, 5)
        assert (moved["step"], moved["focus"]) == ("task_group", "history")
        assert "error" not in moved

        await pilot.press("escape")  # leaves the history panel
        back = await next_line(pilot, app, ready, 6)
        assert back["focus"] == "answer"
        await pilot.press("escape")  # back to the task pick: a new screen
        again = await next_line(pilot, app, ready, 7)
        assert again["step"] == "task_pick" and again["revision"] == group["revision"] + 1
    # Exit: the last line, with the last screen's revision.
    final = lines(ready)
    assert final[-1] == {
        "seq": 8,
        "pid": os.getpid(),
        "screen": "exit",
        "step": None,
        "revision": again["revision"],
        "focus": None,
    }
    assert [line["seq"] for line in final] == list(range(1, 9))


async def test_launch_outcome_is_a_line(
    app_factory: Any, project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ready = tmp_path / "ready.jsonl"
    state = prefill(project, "confirm")
    environment = with_ready_file(monkeypatch, ready)
    app = app_factory(state=state, launch="none", environment=environment)
    async with app.run_test(size=SIZE) as pilot:
        # Written once the guarded screen is armed; no button has the focus and
        # Launch is its own key.
        confirm = await next_line(pilot, app, ready, 1)
        assert (confirm["screen"], confirm["focus"]) == ("confirm", "summary")
        assert app.screen.armed
        await pilot.press("l")
        # Prepare runs in a thread: its outcome line may follow at once.
        await wait_for(pilot, app, lambda: len(lines(ready)) >= 2, "ready line 2", timeout=60)
        launch = lines(ready)[1]
        assert launch["screen"] == "launch" and "outcome" not in launch
        assert launch["revision"] == confirm["revision"] + 1
        done = await next_line(pilot, app, ready, 3)
        assert (done["screen"], done["outcome"]) == ("launch", "prepared")
        runs = project / ".okstra" / "tasks"
        assert list(runs.glob("*/*/runs/*/run-manifest.json"))
        await settle(pilot, app)


async def test_unset_writes_nothing(app_factory: Any, tmp_path: Path) -> None:
    assert ENV_VAR not in os.environ
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("enter")
        await settle(pilot, app)
        assert app.ready_lines.file is None
    assert not list(tmp_path.rglob("*.jsonl"))


async def test_an_unwritable_ready_file_turns_the_signal_off_not_the_app(
    app_factory: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ready = tmp_path / "missing-dir" / "ready.jsonl"
    app = app_factory(environment=with_ready_file(monkeypatch, ready))
    # Recorded, not read back from the toasts: a toast may expire before a loaded
    # machine gets to look at it.
    notes: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(app, "notify", lambda message, **kw: notes.append((message, kw)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, app, lambda: app.ready_lines.file is None, "the signal to turn off")
        await pilot.press("enter")
        await wait_for(
            pilot, app, lambda: getattr(app.screen, "prompt", None) is not None, "a prompt"
        )
    ((message, kw),) = notes
    assert str(ready) in message and kw["severity"] == "warning"
    assert not ready.exists()


def test_ready_file_appends_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "ready.jsonl"
    assert ReadyFile.from_env({}) is None and ReadyFile.from_env({ENV_VAR: ""}) is None
    first, second = ReadyFile.from_env({ENV_VAR: str(path)}), ReadyFile(path)
    assert first is not None
    assert first.write("start", step=None, revision=None, focus="wizards")
    assert second.write("text", step="brief", revision=4, focus="answer", error="é")
    assert first.write_exit()
    raw = path.read_bytes()
    assert raw.endswith(b"\n") and "é".encode() in raw
    got = lines(path)
    assert [(g["seq"], g["screen"]) for g in got] == [(1, "start"), (1, "text"), (2, "exit")]
    assert got[2]["revision"] is None and got[1]["error"] == "é"
