"""Snapshot tests of every screen (the doctor dialog too) at 80×24 and 120×40.

Stable by construction: a fixed clock and uuid source, a project at a fixed path, the
text cursor frozen, and every worker finished before the picture is taken. Each
picture's wizard is answered up to its step through the engine (`prefill`, what Enter
on each screen would answer), so only the screen pictured is rendered.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tui_support import (
    columns_fitted,
    drive_to,
    fixed_environment,
    make_project,
    prefill,
    prepared_run,
    settle,
    titles_fitted,
    wait_for,
)
from tui_support import (
    start_loaded as start_screen_loaded,
)

from okstra_tui.app import make_app

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40")]


def build(project: Path, **kwargs: Any):
    kwargs.setdefault("environment", fixed_environment())
    return make_app(project_root=project, host="terminal", cursor_blink=False, **kwargs)


def at(project: Path, target: str, **kwargs: Any):
    """The app opened on a wizard answered up to step kind `target`."""
    return build(project, state=prefill(project, target), **kwargs)


def reach(target: str, then: Callable[..., Any] | None = None):
    async def run_before(pilot) -> None:
        await drive_to(pilot, pilot.app, target)
        if then is not None:
            await then(pilot)
        await settle(pilot, pilot.app)
        await wait_for(pilot, pilot.app, lambda: titles_fitted(pilot.app.screen), "titles")

    return run_before


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize(
    "target",
    [
        "task_pick",
        "task_group",
        "task_type",
        "role_count",
        "role_add",
        "role_model",
        "directive_pick",
        "confirm",
    ],
)
def test_tui_snapshot_prompt_screens(snap_compare, stable_project, size, target) -> None:
    app = at(stable_project, target)
    assert snap_compare(app, run_before=reach(target), terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_tui_snapshot_refused_text(snap_compare, stable_project, size) -> None:
    async def refuse(pilot) -> None:
        await pilot.press(*"missing.md", "enter")

    app = at(stable_project, "brief")
    assert snap_compare(app, run_before=reach("brief", refuse), terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_tui_snapshot_edit(snap_compare, stable_project, size) -> None:
    async def edit(pilot) -> None:
        await pilot.press("e")

    app = at(stable_project, "confirm")
    assert snap_compare(app, run_before=reach("confirm", edit), terminal_size=size)


async def start_loaded(pilot) -> None:
    """The start screen once its runs and doctor line (workers) have arrived."""
    await start_screen_loaded(pilot, pilot.app)


def resumable_setup(project: Path) -> None:
    from okstra_core.session import Wizard

    wizard = Wizard.init(None, project, host="terminal", environment=fixed_environment())
    for answer in ("new", "grp", "one", "brief.md"):
        wizard.submit(answer)


@pytest.mark.parametrize("size", SIZES)
def test_tui_snapshot_start_with_a_resumable_wizard(snap_compare, stable_project, size) -> None:
    resumable_setup(stable_project)
    assert snap_compare(build(stable_project), run_before=start_loaded, terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_tui_snapshot_start_empty(snap_compare, stable_project, size) -> None:
    assert snap_compare(build(stable_project), run_before=start_loaded, terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_tui_snapshot_start_with_setups_and_runs(snap_compare, stable_project, size) -> None:
    resumable_setup(stable_project)
    prepared_run(stable_project, "widget")
    damaged = prepared_run(stable_project, "gadget")
    (damaged / "run-manifest.json").write_text("{broken", encoding="utf-8")
    assert snap_compare(build(stable_project), run_before=start_loaded, terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_tui_snapshot_start_all_projects(snap_compare, stable_project, size) -> None:
    other = make_project(stable_project.parent / "other")
    resumable_setup(stable_project)
    resumable_setup(other)
    prepared_run(stable_project, "widget")
    prepared_run(other, "gizmo")

    async def toggle(pilot) -> None:
        await start_loaded(pilot)
        await pilot.press("a")
        await wait_for(pilot, pilot.app, lambda: len(pilot.app.screen.runs) == 2, "every run")
        await start_loaded(pilot)

    assert snap_compare(build(stable_project), run_before=toggle, terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_tui_snapshot_launch_none(snap_compare, stable_project, size) -> None:
    async def launch(pilot) -> None:
        await pilot.press("l")
        await settle(pilot, pilot.app)

    app = at(stable_project, "confirm", launch="none")
    assert snap_compare(app, run_before=reach("confirm", launch), terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_tui_snapshot_role_model_with_unavailable_models(
    snap_compare, stable_project, fake_bin, monkeypatch, size
) -> None:
    # Only claude and codex are installed: the other providers' models are dimmed,
    # each with its reason.
    directory = fake_bin("claude", "codex", directory=stable_project.parent / "bin")
    monkeypatch.setenv("PATH", os.pathsep.join([str(directory), "/usr/bin", "/bin"]))
    app = at(stable_project, "role_model")
    assert snap_compare(app, run_before=reach("role_model"), terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_tui_snapshot_help_panel(snap_compare, stable_project, size) -> None:
    async def open_help(pilot) -> None:
        await pilot.press("question_mark")

    app = at(stable_project, "role_model")
    assert snap_compare(app, run_before=reach("role_model", open_help), terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_tui_snapshot_delete_dialog(snap_compare, stable_project, monkeypatch, size) -> None:
    from okstra_core.session import Wizard

    # The dialog shows the state file's full path: keep it the same every run.
    monkeypatch.setenv("OKSTRA_HOME", str(stable_project.parent / "home"))

    wizard = Wizard.init(None, stable_project, host="terminal", environment=fixed_environment())
    for answer in ("new", "grp", "one"):
        wizard.submit(answer)

    async def delete(pilot) -> None:
        await start_loaded(pilot)
        await pilot.press("d")
        await settle(pilot, pilot.app)

    assert snap_compare(build(stable_project), run_before=delete, terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_tui_snapshot_confirm_with_the_launch_preview(
    snap_compare, stable_project, monkeypatch, size
) -> None:
    # The preview lists runs.jsonl in the user's data dir: keep its path the same.
    monkeypatch.setenv("OKSTRA_HOME", str(stable_project.parent / "home"))

    async def open_preview(pilot) -> None:
        await pilot.press("p")
        # Expanding scrolls the panel into view (animated): let that finish.
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()

    app = at(stable_project, "confirm", launch="none")
    assert snap_compare(app, run_before=reach("confirm", open_preview), terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_tui_snapshot_discard_typed_text_dialog(snap_compare, stable_project, size) -> None:
    async def rewind(pilot) -> None:
        await pilot.press(*"half-typed", "ctrl+r", "enter")

    app = at(stable_project, "task_id")
    assert snap_compare(app, run_before=reach("task_id", rewind), terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_tui_snapshot_brief_with_a_path_completion(snap_compare, stable_project, size) -> None:
    (stable_project / "docs").mkdir()
    (stable_project / "docs" / "login-brief.md").write_text("# Login\n", encoding="utf-8")

    async def type_partial(pilot) -> None:
        await pilot.press(*"docs/lo")
        await pilot.pause()

    app = at(stable_project, "brief")
    assert snap_compare(app, run_before=reach("brief", type_partial), terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_tui_snapshot_multiline_directive(snap_compare, stable_project, size) -> None:
    async def write(pilot) -> None:
        await pilot.press("down", "enter")
        await settle(pilot, pilot.app)
        await pilot.press(*"Focus on the parser.", "enter", *"Leave the CLI alone.")

    app = at(stable_project, "directive_pick")
    assert snap_compare(app, run_before=reach("directive_pick", write), terminal_size=size)


def fitted(screen: Any) -> bool:
    """Both tables of the runs screen have fitted their columns to their rows."""
    from textual.widgets import DataTable

    return all(columns_fitted(table) for table in screen.query(DataTable))


@pytest.mark.parametrize("size", SIZES)
def test_tui_snapshot_runs_screen(snap_compare, stable_project, size) -> None:
    from okstra_tui.screens.runs import RunsScreen

    prepared_run(stable_project, "widget")
    prepared_run(stable_project, "gadget")

    async def open_runs(pilot) -> None:
        app = pilot.app
        await start_loaded(pilot)
        app.show_runs()
        await wait_for(
            pilot,
            app,
            lambda: (
                isinstance(app.screen, RunsScreen)
                and len(app.screen.rows) == 2
                and app.screen.team_revision > 0
            ),
            "the runs screen and its team",
        )
        await wait_for(pilot, app, lambda: fitted(app.screen), "the tables fitted")
        await settle(pilot, app)

    assert snap_compare(build(stable_project), run_before=open_runs, terminal_size=size)


def launched_setup(project: Path) -> Path:
    """A confirmed setup that has prepared one run (its lead not launched)."""
    from okstra_core.frontend import prepare_setup
    from okstra_core.session import Wizard

    path = prefill(project, "confirm")
    Wizard.open(path, environment=fixed_environment()).submit("confirm")
    prepare_setup(path, launch="none", environment=fixed_environment())
    return path


@pytest.mark.parametrize("size", SIZES)
def test_tui_snapshot_launched_setup(snap_compare, stable_project, size) -> None:
    """A launched setup opens on its run: Enter opens it, `l` launches another."""
    from tui_support import wait_armed

    async def armed(pilot) -> None:
        await settle(pilot, pilot.app)
        await wait_armed(pilot, pilot.app)
        await settle(pilot, pilot.app)

    app = build(stable_project, state=launched_setup(stable_project), launch="none")
    assert snap_compare(app, run_before=armed, terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_tui_snapshot_relaunch_question(snap_compare, stable_project, size) -> None:
    from tui_support import wait_armed

    from okstra_tui.screens.dialog import RelaunchScreen

    async def ask(pilot) -> None:
        app = pilot.app
        await settle(pilot, app)
        await wait_armed(pilot, app)
        await pilot.press("l")
        await wait_for(pilot, app, lambda: isinstance(app.screen, RelaunchScreen), "the question")
        await wait_armed(pilot, app)
        await settle(pilot, app)

    app = build(stable_project, state=launched_setup(stable_project), launch="none")
    assert snap_compare(app, run_before=ask, terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_tui_snapshot_doctor(snap_compare, stable_project, size) -> None:
    """The doctor dialog, in an environment of its own: fake CLIs (with `--version` and
    `--help` answers), a fake tmux and node at fixed paths, an empty home (no logins)."""
    from tui_support import FAKE_HELP, fixed_environment

    from okstra_core.environment import Environment
    from okstra_tui.screens.doctor import DoctorScreen
    from tests.conftest import write_fake_cli

    base = stable_project.parent
    bin_dir = base / "bin"
    for name in ("claude", "codex", "gemini", "grok", "kimi", "okstra-demo-agent"):
        write_fake_cli(bin_dir, name)
    tmux = bin_dir / "tmux"
    tmux.write_text("#!/bin/sh\necho 'tmux 3.4'\n", encoding="utf-8")
    tmux.chmod(0o755)
    node = bin_dir / "node"  # the doctor's Node.js line, the same on every machine
    node.write_text("#!/bin/sh\necho 'v22.11.0'\n", encoding="utf-8")
    node.chmod(0o755)
    (base / "home").mkdir()
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "HOME": str(base / "home"),
        "OKSTRA_HOME": os.environ["OKSTRA_HOME"],
        "FAKE_CLI_HELP": FAKE_HELP,
        "LANG": "C.UTF-8",
    }
    clock = fixed_environment()
    # own_dir=None: the demo agent is the fake above, not this checkout's.
    environment = Environment(env=env, now=clock.now, new_uuid=clock.new_uuid, own_dir=None)
    app = make_app(
        project_root=stable_project, host="terminal", environment=environment, cursor_blink=False
    )

    async def open_doctor(pilot) -> None:
        app = pilot.app
        await settle(pilot, app)
        app.show_doctor()
        await wait_for(pilot, app, lambda: isinstance(app.screen, DoctorScreen), "the doctor")
        await settle(pilot, app)
        summary = app.screen.query_one("#summary")
        await wait_for(pilot, app, lambda: "ready" in str(summary.render()), "the checks")
        await settle(pilot, app)

    assert snap_compare(app, run_before=open_doctor, terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_tui_snapshot_guide_without_agent_clis(snap_compare, stable_project, size) -> None:
    """The first setup screen when no agent CLI is installed: the guide."""
    from okstra_core.environment import Environment
    from okstra_tui.screens.doctor import GuideScreen

    empty = stable_project.parent / "no-clis"
    empty.mkdir()
    node = empty / "node"  # a current Node.js, the same on every machine
    node.write_text("#!/bin/sh\necho 'v22.11.0'\n", encoding="utf-8")
    node.chmod(0o755)
    clock = fixed_environment()
    env = {**os.environ, "PATH": f"{empty}:/usr/bin:/bin"}
    environment = Environment(env=env, now=clock.now, new_uuid=clock.new_uuid)
    app = build(stable_project, environment=environment)

    async def open_guide(pilot) -> None:
        await start_loaded(pilot)
        await pilot.press("enter")
        await wait_for(pilot, pilot.app, lambda: isinstance(pilot.app.screen, GuideScreen), "guide")
        await settle(pilot, pilot.app)

    assert snap_compare(app, run_before=open_guide, terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_tui_snapshot_trust_question(snap_compare, stable_project, size) -> None:
    """The question before the first launch in a project not trusted yet, over the
    start screen (what is behind it in the app, the launch screen's progress bar,
    moves; the dialog is the same)."""
    from okstra_tui.screens.dialog import TrustScreen

    app = build(stable_project)

    async def ask(pilot) -> None:
        await start_loaded(pilot)
        pilot.app.push_screen(TrustScreen(stable_project))
        await wait_for(pilot, pilot.app, lambda: isinstance(pilot.app.screen, TrustScreen), "trust")
        await settle(pilot, pilot.app)

    assert snap_compare(app, run_before=ask, terminal_size=size)


def frozen_team(row: Any, environment: Any, text: Any, selected: str | None = None) -> Any:
    """A team of five at a fixed moment (the runs screen's look, made deterministic:
    fixed elapsed times, activities and last lines), analyser#2 highlighted."""
    from okstra_core.life.workers.observe import WorkerState
    from okstra_tui.team_view import TeamLook, member_row

    def member(short: str, **fields: Any) -> WorkerState:
        role, number = short.split("#")
        values: dict[str, Any] = {
            "role_execution_ref": f"role-exec-{role}-{int(number):03d}",
            "participant_ref": f"participant-{role}-{int(number):03d}",
            "label": f"{short} ({role})",
            "short": short,
            "role": role,
            "provider": "claude",
            "model_ref": "claude/opus-4.6",
            "leader": role == "leader",
            "access": "read-only",
            "surface": "tmux",
            "state": "running",
            "status": "running",
            "started_at": "2026-01-15T09:00:00+00:00",
        }
        values.update(fields)
        return WorkerState(**values)

    team = [
        member_row(member("leader#1", elapsed_seconds=1800), shown="running",
                   activity="waiting for input", last="❯"),
        member_row(member("analyser#1", elapsed_seconds=754, activity="running",
                          last_line="Reading src/widget.py")),
        member_row(member("analyser#2", provider="codex", model_ref="codex/gpt-5.2",
                          elapsed_seconds=95, activity="stalled",
                          last_line="stream error: retrying in 8s")),
        member_row(member("fixer#1", access="workspace-write", state="exited",
                          status="exited 0", elapsed_seconds=3725,
                          last_line="Fixed the off-by-one in widget.py")),
        member_row(member("verifier#1", state="stopped", status="stopped",
                          elapsed_seconds=42, last_line="fake worker: got signal 15")),
    ]  # fmt: skip
    return TeamLook(
        rows=tuple(team),
        title=text.get("app.team.title", count=len(team)),
        preview_title=text.get(
            "app.team.preview", who="analyser#2", where=text.get("app.team.preview_log")
        ),
        preview=("thinking about the widget", "stream error: retrying in 8s"),
    )


@pytest.mark.parametrize("size", SIZES)
def test_tui_snapshot_runs_screen_team(snap_compare, stable_project, monkeypatch, size) -> None:
    from okstra_tui.screens import runs
    from okstra_tui.screens.runs import RunsScreen

    prepared_run(stable_project, "widget")
    monkeypatch.setattr(runs, "team_of", frozen_team)

    async def open_team(pilot) -> None:
        app = pilot.app
        await start_loaded(pilot)
        app.show_runs()
        await wait_for(
            pilot,
            app,
            lambda: isinstance(app.screen, RunsScreen) and app.screen.team_revision > 0,
            "the team",
        )
        await wait_for(pilot, app, lambda: fitted(app.screen), "the tables fitted")
        await pilot.press("tab", "down", "down")
        await settle(pilot, app)

    assert snap_compare(build(stable_project), run_before=open_team, terminal_size=size)
