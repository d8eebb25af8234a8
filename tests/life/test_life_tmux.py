"""The lead's life in real tmux (a private server): exit recorded, runs, status, attach, stop."""

from __future__ import annotations

import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from life_support import (
    base_env,
    eventually,
    leader,
    make_fake_clis,
    okstra,
    okstra_json,
    prepare_args,
    read_jsonl,
    set_lead,
    timeline_events,
)

from tests.conftest import okstra_cmd

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


@pytest.fixture
def world(tmp_path: Path) -> Iterator[dict[str, Any]]:
    socket = f"okstra-life-{uuid.uuid4().hex[:12]}"
    project = tmp_path / "proj"
    (project / "src" / "deep").mkdir(parents=True)
    (project / "brief.md").write_text("Speed up the widget.\n", encoding="utf-8")
    bin_dir = make_fake_clis(tmp_path / "bin")
    env = base_env(bin_dir, tmp_path, OKSTRA_TMUX_SOCKET=socket)
    yield {
        "socket": socket,
        "project": project,
        "sub": project / "src" / "deep",
        "env": env,
        "spec": tmp_path / "lead.json",
        "log": tmp_path / "lead.log",
        "tmp": tmp_path,
    }
    subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True, check=False)


def tmux(world: dict[str, Any], *args: str, check: bool = True) -> str:
    done = subprocess.run(
        ["tmux", "-L", world["socket"], *args], capture_output=True, text=True, check=check
    )
    return done.stdout


def launch(world: dict[str, Any], task_id: str = "widget", **lead: Any) -> dict[str, Any]:
    set_lead(world["spec"], **lead)
    code, doc = okstra_json(
        prepare_args(world["project"], "tmux", task_id=task_id),
        cwd=world["project"],
        env=world["env"],
    )
    assert code == 0, doc
    return doc


def status(world: dict[str, Any], run: str) -> dict[str, Any]:
    code, doc = okstra_json(["status", run, "--json"], cwd=world["sub"], env=world["env"])
    assert code == 0, doc
    return doc


def started(world: dict[str, Any], count: int) -> list[dict[str, Any]]:
    return eventually(
        lambda: [e for e in read_jsonl(world["log"]) if e["event"] == "started"][count - 1 :],
        f"lead start #{count}",
    )


def test_exit_status_is_recorded_once_and_the_pane_is_kept(world: dict[str, Any]) -> None:
    # Outlives the launch check, then exits 3 on its own.
    doc = launch(world, delay=1, exit=3)
    run_dir = Path(doc["runDir"])
    pane = leader(run_dir)["paneRef"]
    assert leader(run_dir)["status"] == "launched" and pane.startswith("%")
    started(world, 1)
    # No daemon: okstra records the exit when it next looks — here `okstra status`.
    seen = eventually(
        lambda: (s := status(world, doc["runId"]))["lead"]["state"] == "exited" and s,
        "the lead's exit recorded",
    )
    assert seen["leadStatus"] == "exited 3" and seen["lead"]["exitStatus"] == 3
    assert "fake lead: bye" in seen["lastLines"]
    assert leader(run_dir)["status"] == "exited" and leader(run_dir)["exitStatus"] == 3
    (event,) = timeline_events(run_dir, "lead-exited")
    assert event["exitStatus"] == 3 and event["paneRef"] == pane
    assert "fake lead: working on it" in event["lastLines"]
    # The pane survived the exit (dead, status kept) for anyone to read.
    assert tmux(world, "display-message", "-p", "-t", pane, "#{pane_dead}").strip() == "1"
    # Looking again records nothing new.
    again = status(world, doc["runId"])
    assert again["leadStatus"] == "exited 3" and again["lead"]["recordedNow"] is False
    assert len(timeline_events(run_dir, "lead-exited")) == 1


def test_a_lead_exiting_at_once_keeps_its_pane_and_status(world: dict[str, Any]) -> None:
    # remain-on-exit is on before the CLI starts: even a 0.1 s lead leaves its pane, and
    # the launch, watching the start, says the lead exited (exit 3) and records it. A
    # bound no start here reaches: the watch ends on the pane's death, however loaded.
    world["env"]["OKSTRA_LAUNCH_WATCH"] = "60"
    set_lead(world["spec"], delay=0.1, exit=0)
    code, doc = okstra_json(
        prepare_args(world["project"], "tmux"), cwd=world["project"], env=world["env"]
    )
    assert code == 3 and doc["error"].startswith("the lead exited 0 after"), doc
    run_dir = Path(doc["runDir"])
    pane = leader(run_dir)["paneRef"]
    assert tmux(world, "display-message", "-p", "-t", pane, "#{pane_dead}").strip() == "1"
    seen = status(world, f"perf/widget/{doc['runId']}")
    assert seen["leadStatus"] == "exited 0"
    # A non-zero exit: its status and last lines, the same end `status` reads.
    set_lead(world["spec"], delay=0.1, exit=5)
    code, failed = okstra_json(
        prepare_args(world["project"], "tmux"), cwd=world["project"], env=world["env"]
    )
    assert code == 3 and failed["error"].startswith("the lead exited 5 after"), failed
    assert "fake lead: bye" in failed["error"]
    listed = status(world, f"perf/widget/{failed['runId']}")
    assert listed["leadStatus"] == "exited 5", listed
    assert leader(Path(failed["runDir"]))["status"] == "exited"


def test_runs_lists_the_project_from_a_subdirectory(world: dict[str, Any]) -> None:
    live = launch(world, task_id="live", delay=60)
    started(world, 1)
    code, prepared = okstra_json(
        prepare_args(world["project"], "none", task_id="later"),
        cwd=world["project"],
        env=world["env"],
    )
    assert code == 0, prepared
    code, doc = okstra_json(["runs", "--json"], cwd=world["sub"], env=world["env"])
    assert code == 0, doc
    assert doc["projectRoot"] == str(world["project"].resolve())
    rows = doc["runs"]
    assert [r["taskKey"] for r in rows] == ["perf/later", "perf/live"]  # newest first
    later, running = rows
    assert later["runId"] == prepared["runId"] and later["leadStatus"] == "prepared"
    assert later["backend"] is None and later["teamSize"] == len(prepared["team"])
    assert running["leadStatus"] == "running" and running["backend"] == "tmux"
    assert running["taskType"] == "requirements-discovery"
    assert running["teamSize"] == len(live["team"]) and running["ageSeconds"] >= 0
    assert running["lead"]["windowRef"] == live["launch"]["windowRef"]
    assert running["resumeCommand"].endswith("--exec")
    # The human table says the same.
    table = okstra(["runs"], cwd=world["sub"], env=world["env"]).stdout.decode()
    assert "running" in table and "prepared" in table and "perf/live" in table
    # --all reads the central index: both runs, from anywhere.
    code, everything = okstra_json(["runs", "--all", "--json"], cwd=world["tmp"], env=world["env"])
    assert code == 0 and {r["runId"] + r["taskKey"] for r in everything["runs"]} == {
        r["runId"] + r["taskKey"] for r in rows
    }
    # Outside any project, without --all: a clear error.
    proc = okstra(["runs"], cwd=world["tmp"], env=world["env"])
    assert proc.returncode == 2 and b"--all" in proc.stderr


def test_stop_a_live_lead(world: dict[str, Any]) -> None:
    doc = launch(world, delay=60, trapInt=True, signalExit=130)
    run_dir = Path(doc["runDir"])
    pane = leader(run_dir)["paneRef"]
    started(world, 1)
    code, stopped = okstra_json(
        ["stop", doc["runId"], "--json", "--grace", "20"], cwd=world["sub"], env=world["env"]
    )
    assert code == 0, stopped
    assert stopped["wasRunning"] and stopped["stopped"] and stopped["steps"][0] == "sent Ctrl-C"
    assert stopped["lead"]["state"] == "stopped" and stopped["lead"]["exitStatus"] == 130
    assert leader(run_dir)["status"] == "stopped"
    assert len(timeline_events(run_dir, "lead-stop-requested")) == 1
    (event,) = timeline_events(run_dir, "lead-exited")
    assert event["status"] == "stopped"
    assert any(line.endswith("fake lead: got signal 2") for line in event["lastLines"])
    # Its window is closed; stopping again sends nothing.
    assert pane not in tmux(world, "list-panes", "-a", "-F", "#{pane_id}", check=False).split()
    code, again = okstra_json(["stop", doc["runId"], "--json"], cwd=world["sub"], env=world["env"])
    assert code == 0 and again["wasRunning"] is False and again["steps"] == []


def test_stop_escalates_when_ctrl_c_is_ignored(world: dict[str, Any]) -> None:
    # Ctrl-C is ignored: after half the grace time the lead gets SIGTERM, which ends it.
    doc = launch(world, delay=60, ignoreInt=True, signalExit=42)
    started(world, 1)
    code, stopped = okstra_json(
        ["stop", doc["runId"], "--json", "--grace", "1"], cwd=world["sub"], env=world["env"]
    )
    assert code == 0, stopped
    assert stopped["steps"][0] == "sent Ctrl-C" and stopped["steps"][1].startswith("sent SIGTERM")
    assert stopped["lead"]["label"] == "stopped 42"
    signals = [e["signal"] for e in read_jsonl(world["log"]) if e["event"] == "signal"]
    assert signals == [15]


def test_attach_outside_tmux_and_when_the_window_is_gone(world: dict[str, Any]) -> None:
    doc = launch(world, delay=60)
    run_dir = Path(doc["runDir"])
    started(world, 1)
    # A terminal of its own (another tmux server) runs `okstra attach` outside tmux.
    outer = f"{world['socket']}-outer"
    env = {k: v for k, v in world["env"].items() if k != "OKSTRA_TMUX_SOCKET"}
    cmd = " ".join([*okstra_cmd(), "attach", doc["runId"]])
    try:
        subprocess.run(
            [
                "tmux",
                "-L",
                outer,
                "new-session",
                "-d",
                "-s",
                "t",
                "-x",
                "100",
                "-y",
                "30",
                "-c",
                str(world["sub"]),
                "--",
                "env",
                *[f"{k}={v}" for k, v in env.items()],
                "sh",
                "-c",
                cmd,
            ],
            check=True,
        )

        def shown() -> bool:
            screen = subprocess.run(
                ["tmux", "-L", outer, "capture-pane", "-p", "-t", "t"],
                capture_output=True,
                text=True,
                check=False,
            ).stdout
            return "fake lead: working on it" in screen

        eventually(shown, "the lead's window shown by `okstra attach`")
    finally:
        subprocess.run(["tmux", "-L", outer, "kill-server"], capture_output=True, check=False)
    # Without a terminal (no tty here) attach says so in okstra's words, exit 2.
    proc = okstra(["attach", doc["runId"]], cwd=world["sub"], env=world["env"])
    message = proc.stderr.decode()
    assert proc.returncode == 2 and "there is none here" in message, message
    assert f"okstra status {doc['runId']}" in message
    # The window is closed behind okstra's back: attach says so, with the resume command.
    tmux(world, "kill-pane", "-t", leader(run_dir)["paneRef"])
    proc = okstra(["attach", doc["runId"]], cwd=world["sub"], env=world["env"])
    message = proc.stderr.decode()
    assert proc.returncode == 1 and "is gone" in message and "okstra resume" in message
    assert leader(run_dir)["status"] == "gone"
    assert status(world, doc["runId"])["leadStatus"] == "gone"


def test_resume_and_runs_record_the_exit_too(world: dict[str, Any]) -> None:
    doc = launch(world, delay=1, exit=2)
    run_dir = Path(doc["runDir"])
    started(world, 1)

    def resumed() -> dict[str, Any] | None:
        code, sheet = okstra_json(
            ["resume", doc["runId"], "--wait", "0", "--json"], cwd=world["sub"], env=world["env"]
        )
        assert code == 0, sheet
        return sheet if sheet["lead"]["state"] == "exited" else None

    sheet = eventually(resumed, "`okstra resume` to see the exit")
    assert sheet["lead"]["exitStatus"] == 2 and sheet["lead"]["recordedNow"] is True
    code, listed = okstra_json(["runs", "--json"], cwd=world["sub"], env=world["env"])
    assert code == 0 and listed["runs"][0]["leadStatus"] == "exited 2"
    assert listed["runs"][0]["lead"]["recordedNow"] is False
    assert len(timeline_events(run_dir, "lead-exited")) == 1


def test_a_socket_path_names_the_tmux_server(world: dict[str, Any]) -> None:
    # OKSTRA_TMUX_SOCKET with a `/` is the server's socket path (`tmux -S`), not a name.
    sock = world["tmp"] / "okstra-tmux.sock"
    world["env"]["OKSTRA_TMUX_SOCKET"] = str(sock)
    try:
        doc = launch(world, delay=60)
        run_dir = Path(doc["runDir"])
        assert leader(run_dir)["tmuxSocket"] == str(sock) and sock.exists()
        started(world, 1)
        assert status(world, doc["runId"])["leadStatus"] == "running"
    finally:
        subprocess.run(["tmux", "-S", str(sock), "kill-server"], capture_output=True, check=False)
