"""The exec backend in the foreground: okstra stays the lead CLI's parent.

Run in a real pseudo-terminal (okstra's controlling terminal) and without one: the run
id and resume command come before the lead, a summary after; the lead's exit status is
okstra's and is recorded; terminal signals reach the lead, not okstra; signals sent to
okstra are passed on.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import signal
import subprocess
import termios
from pathlib import Path
from typing import Any

import orjson
import pytest
from life_support import (
    base_env,
    eventually,
    leader,
    make_fake_clis,
    okstra,
    prepare_args,
    read_jsonl,
    set_lead,
    timeline_events,
)

from okstra_core.life.watcher import read_watcher
from tests.conftest import okstra_cmd


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Any]:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "brief.md").write_text("Speed up the widget.\n", encoding="utf-8")
    bin_dir = make_fake_clis(tmp_path / "bin")
    return {
        "project": project,
        "env": base_env(bin_dir, tmp_path, TERM="xterm"),
        "spec": tmp_path / "lead.json",
        "log": tmp_path / "lead.log",
    }


def _controlling_tty() -> None:  # in the child: the pty's slave becomes its terminal
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Pty:
    """`okstra …` with a pseudo-terminal as its controlling terminal."""

    def __init__(self, args: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.master, slave = os.openpty()
        self.proc = subprocess.Popen(
            [*okstra_cmd(), *args],
            cwd=cwd,
            env=env,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
            preexec_fn=_controlling_tty,
        )
        os.close(slave)
        self.output = b""

    def pump(self) -> None:
        while self.master >= 0 and select.select([self.master], [], [], 0)[0]:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # EIO: every slave fd is closed
                return
            if not chunk:
                return
            self.output += chunk

    def text(self) -> str:
        self.pump()
        return self.output.decode("utf-8", "replace")

    def finish(self, timeout: float = 30) -> int:
        def done() -> bool:
            self.pump()
            return self.proc.poll() is not None

        eventually(done, "okstra to exit", timeout)
        self.pump()
        os.close(self.master)
        self.master = -1
        return self.proc.returncode


def started(world: dict[str, Any]) -> dict[str, Any]:
    return eventually(
        lambda: next((e for e in read_jsonl(world["log"]) if e["event"] == "started"), None),
        "the lead to start",
    )


def test_in_a_terminal_the_lead_is_a_foreground_child(world: dict[str, Any]) -> None:
    set_lead(world["spec"], delay=0.2, exit=7)
    world["env"]["OKSTRA_WATCH_INTERVAL"] = "0.05"
    term = Pty(prepare_args(world["project"], "exec"), world["project"], world["env"])
    code = term.finish()
    text = term.text()
    assert code == 7, text
    doc = orjson.loads(text[text.index("{") : text.index("\n}") + 2])
    run_dir = Path(doc["runDir"])
    # Before the lead: the run and the exact resume command; after: a summary.
    before = text.index(f"okstra: run perf/widget/{doc['runId']}")
    resume = f"okstra resume {run_dir} --exec"
    assert text.index(resume) < text.index("fake lead: working on it")
    assert before < text.index("fake lead: bye") < text.index("exited with status 7")
    lead = started(world)
    assert lead["foreground"] is True  # the lead's process group owns the terminal
    assert leader(run_dir)["status"] == "exited" and leader(run_dir)["exitStatus"] == 7
    (event,) = timeline_events(run_dir, "lead-exited")
    assert event["exitStatus"] == 7 and event["backend"] == "exec"
    assert leader(run_dir)["processId"] == lead["pid"]
    # The run's watcher started with the lead, on its terminal, and ended with it.
    watcher = eventually(
        lambda: (r := read_watcher(run_dir)) is not None and r.ended_at and r, "watcher end"
    )
    assert watcher.tty is not None and watcher.tty.startswith("/dev/")
    assert watcher.end_reason == "team done"
    assert [t.split("@")[0] for t in watcher.told] == ["team-done"]


def test_ctrl_c_reaches_the_lead_and_signals_to_okstra_are_passed_on(
    world: dict[str, Any],
) -> None:
    set_lead(world["spec"], delay=60, trapInt=True, signalExit=42)
    term = Pty(prepare_args(world["project"], "exec"), world["project"], world["env"])
    try:
        lead = started(world)
        # A resize signal sent to okstra reaches the lead; okstra keeps waiting.
        os.kill(term.proc.pid, signal.SIGWINCH)
        eventually(
            lambda: any(e.get("signal") == signal.SIGWINCH for e in read_jsonl(world["log"])),
            "SIGWINCH passed on",
        )
        # Ctrl-C typed in the terminal goes to the foreground group: the lead, not okstra.
        os.write(term.master, b"\x03")
        code = term.finish()
    finally:
        with contextlib.suppress(ProcessLookupError):
            term.proc.kill()
    assert code == 42, term.text()
    signals = [e["signal"] for e in read_jsonl(world["log"]) if e["event"] == "signal"]
    assert signals == [signal.SIGWINCH, signal.SIGINT]
    assert "Traceback" not in term.text() and "interrupted" not in term.text()
    (run_dir,) = world["project"].glob(".okstra/tasks/*/*/runs/*")
    assert leader(run_dir)["exitStatus"] == 42 and leader(run_dir)["processId"] == lead["pid"]


def test_sigterm_to_okstra_stops_the_lead_and_its_status_is_returned(
    world: dict[str, Any],
) -> None:
    # No terminal: the lead is a plain child; SIGTERM to okstra is passed on.
    set_lead(world["spec"], delay=60, signalExit=43)
    proc = subprocess.Popen(
        [*okstra_cmd(), *prepare_args(world["project"], "exec")],
        cwd=world["project"],
        env=world["env"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        started(world)
        os.kill(proc.pid, signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    assert proc.returncode == 43, err
    # stdout: okstra's JSON document, then what the lead printed.
    doc = orjson.loads(out[: out.index(b"\n}\n") + 2])
    assert out.endswith(b"fake lead: got signal 15\n")
    assert f"okstra: run perf/widget/{doc['runId']}" in err.decode()
    assert "exited with status 43" in err.decode()
    run_dir = Path(doc["runDir"])
    assert leader(run_dir)["status"] == "exited" and leader(run_dir)["exitStatus"] == 43
    # `okstra status` shows what was recorded; the process is gone, nothing changes.
    proc2 = okstra(["status", doc["runId"], "--json"], cwd=world["project"], env=world["env"])
    assert orjson.loads(proc2.stdout)["leadStatus"] == "exited 43"


def _start_of(pid: int) -> str:
    raw = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    return raw.rpartition(")")[2].split()[19]


def test_okstra_stop_from_another_terminal_stops_a_foreground_lead(
    world: dict[str, Any],
) -> None:
    set_lead(world["spec"], delay=60, signalExit=44)
    proc = subprocess.Popen(
        [*okstra_cmd(), *prepare_args(world["project"], "exec")],
        cwd=world["project"],
        env=world["env"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        lead = started(world)
        (run_dir,) = world["project"].glob(".okstra/tasks/*/*/runs/*")
        eventually(lambda: leader(run_dir).get("processId") == lead["pid"], "the pid recorded")
        # Recorded with what tells it from any other process: its start time, its parent
        # (this okstra) and the parent's start time.
        recorded = leader(run_dir)
        assert recorded["processStart"] == _start_of(lead["pid"])
        assert recorded["parentProcessId"] == proc.pid
        assert recorded["parentStart"] == _start_of(proc.pid)
        running = okstra(["status", run_dir.name, "--json"], cwd=world["project"], env=world["env"])
        assert orjson.loads(running.stdout)["leadStatus"] == "running"
        stopped = okstra(
            ["stop", run_dir.name, "--json", "--grace", "20"],
            cwd=world["project"],
            env=world["env"],
        )
        doc = orjson.loads(stopped.stdout)
        assert stopped.returncode == 0 and doc["stopped"], doc
        assert doc["steps"] == [f"sent SIGTERM to {lead['pid']}"]
        assert doc["lead"]["label"] == "stopped 44"
        proc.communicate(timeout=30)
    finally:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    # The foreground okstra recorded the end — as stopped, since a stop was asked for.
    assert proc.returncode == 44
    assert leader(run_dir)["status"] == "stopped"
    assert len(timeline_events(run_dir, "lead-exited")) == 1


def test_ctrl_z_stops_okstra_with_the_lead_and_fg_continues_both(world: dict[str, Any]) -> None:
    set_lead(world["spec"], delay=60, signalExit=45)
    term = Pty(prepare_args(world["project"], "exec"), world["project"], world["env"])
    try:
        started(world)
        os.write(term.master, b"\x1a")  # Ctrl-Z: the terminal stops the lead's group

        def okstra_stopped() -> bool:
            term.pump()
            pid, status = os.waitpid(term.proc.pid, os.WUNTRACED | os.WNOHANG)
            return pid != 0 and os.WIFSTOPPED(status)

        # okstra stops itself too, as a shell job whose process stopped.
        eventually(okstra_stopped, "okstra to stop with its lead")
        os.kill(term.proc.pid, signal.SIGCONT)  # what the shell's `fg` does
        # Continued: the lead owns the terminal again and still answers signals.
        os.kill(term.proc.pid, signal.SIGTERM)
        code = term.finish()
    finally:
        with contextlib.suppress(ProcessLookupError):
            term.proc.kill()
    assert code == 45, term.text()


# --------------------------------------------------------------------------- resume --exec


def _prepared_run(world: dict[str, Any]) -> Path:
    """A run launched in the foreground whose lead exited 3 (its end recorded)."""
    set_lead(world["spec"], delay=0, exit=3)
    proc = okstra(prepare_args(world["project"], "exec"), cwd=world["project"], env=world["env"])
    assert proc.returncode == 3, proc.stderr.decode()
    (run_dir,) = world["project"].glob(".okstra/tasks/*/*/runs/*")
    assert leader(run_dir)["exitStatus"] == 3
    # Its watcher has told the team's end before anything resumes the run: a lead
    # resumed before the watcher's first look is watched on, its first end never told.
    eventually(
        lambda: (r := read_watcher(run_dir)) is not None and r.ended_at and r.told,
        "the first watcher's end",
    )
    world["log"].unlink()
    return run_dir


def test_resume_exec_keeps_okstra_the_parent_and_records_the_exit(world: dict[str, Any]) -> None:
    run_dir = _prepared_run(world)
    sub = world["project"] / "src" / "deep"
    sub.mkdir(parents=True)
    set_lead(world["spec"], delay=0.3, exit=5)
    term = Pty(["resume", run_dir.name, "--exec"], sub, world["env"])
    code = term.finish()
    text = term.text()
    assert code == 5, text
    # Before the lead: the run and the exact resume command; after: a one-line summary.
    resume = f"okstra resume {run_dir} --exec"
    assert text.index(f"okstra: run perf/widget/{run_dir.name}") < text.index("working on it")
    assert text.index(resume) < text.index("fake lead: working on it")
    assert text.index("fake lead: bye") < text.index("exited with status 5")
    lead = started(world)
    # The resumed lead keeps okstra's MCP server (`--mcp-config FILE --allowedTools …`).
    assert lead["foreground"] is True and lead["argv"][:1] == ["--mcp-config"]
    assert lead["argv"][4] == "--resume"
    recorded = leader(run_dir)
    assert recorded["status"] == "exited" and recorded["exitStatus"] == 5
    assert recorded["processId"] == lead["pid"] and recorded["launchBackend"] == "exec"
    (resumed,) = timeline_events(run_dir, "lead-resumed")
    assert resumed["processId"] == lead["pid"]
    ends = [e["exitStatus"] for e in timeline_events(run_dir, "lead-exited")]
    assert ends == [3, 5]
    # A watcher for each launch: the team's end is told once for each lead's end.
    watcher = eventually(
        lambda: (
            (r := read_watcher(run_dir)) is not None
            and r.ended_at
            and str(lead["pid"]) in " ".join(r.told)
            and r
        ),
        "the second watcher's end",
    )
    assert [t.split("@")[0] for t in watcher.told] == ["team-done", "team-done"]


@pytest.mark.parametrize(
    ("sig", "spec"), [(signal.SIGTERM, {}), (signal.SIGINT, {"trapInt": True})]
)
def test_resume_exec_passes_signals_to_the_lead(
    world: dict[str, Any], sig: int, spec: dict[str, Any]
) -> None:
    run_dir = _prepared_run(world)
    set_lead(world["spec"], delay=60, signalExit=45, **spec)
    proc = subprocess.Popen(
        [*okstra_cmd(), "resume", run_dir.name, "--exec"],
        cwd=world["project"],
        env=world["env"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        lead = started(world)
        eventually(lambda: leader(run_dir).get("processId") == lead["pid"], "the pid recorded")
        running = okstra(["status", run_dir.name, "--json"], cwd=world["project"], env=world["env"])
        assert orjson.loads(running.stdout)["leadStatus"] == "running"
        os.kill(proc.pid, sig)
        _, err = proc.communicate(timeout=30)
    finally:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    assert proc.returncode == 45, err.decode()
    assert [e["signal"] for e in read_jsonl(world["log"]) if e["event"] == "signal"] == [sig]
    assert "exited with status 45" in err.decode() and b"Traceback" not in err
    assert leader(run_dir)["exitStatus"] == 45


def test_resume_exec_refuses_a_lead_that_still_runs(world: dict[str, Any]) -> None:
    set_lead(world["spec"], delay=60)
    proc = subprocess.Popen(
        [*okstra_cmd(), *prepare_args(world["project"], "exec")],
        cwd=world["project"],
        env=world["env"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        lead = started(world)
        (run_dir,) = world["project"].glob(".okstra/tasks/*/*/runs/*")
        eventually(lambda: leader(run_dir).get("processId") == lead["pid"], "the pid recorded")
        again = okstra(["resume", run_dir.name, "--exec"], cwd=world["project"], env=world["env"])
        assert again.returncode == 1
        assert b"still running" in again.stderr and b"okstra stop" in again.stderr
        assert len([e for e in read_jsonl(world["log"]) if e["event"] == "started"]) == 1
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
