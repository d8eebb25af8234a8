"""Fake lead CLIs and helpers of the run's-life tests (not a test module).

The fake reads how to behave from the JSON file named by `LEAD_SPEC` at every start
(`{"delay": seconds, "exit": status}`), so runs on one tmux server — whose windows
inherit the server's environment — can each behave differently. It notes what happens
to it (started, signals) as JSON lines in `LEAD_LOG`: the tests synchronise on those.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from tests.conftest import okstra_cmd, write_fake

CLIS = ("claude", "gemini", "codex", "grok", "kimi")
HELP = (
    "usage: cli [options] -- [prompt]\n"
    "  --session-id --session --model --resume --prompt-interactive --no-daemon\n"
    "  --config --system-prompt-file --agent-file\n"
)

FAKE_LEAD = """#!{python}
import json, os, signal, sys, time
name = os.environ.pop("FAKE_CLI_NAME", None) or os.path.basename(sys.argv[0])
args = sys.argv[1:]
if "--version" in args:
    print(name + " 9.9.9 (fake)")
    sys.exit(0)
if "--help" in args:
    print({help!r})
    sys.exit(0)
if args[:2] in (["auth", "status"], ["login", "status"]):
    sys.exit(2)  # a login status okstra does not understand: "cannot tell"
spec = {{}}
if os.environ.get("LEAD_SPEC"):
    with open(os.environ["LEAD_SPEC"], encoding="utf-8") as fh:
        spec = json.load(fh)
log = os.environ.get("LEAD_LOG")
def note(**kw):
    if log:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(kw) + "\\n")
def on_signal(signum, frame):
    note(event="signal", signal=signum, pid=os.getpid())
    if signum == signal.SIGWINCH:
        return
    print("fake lead: got signal %d" % signum, flush=True)
    sys.exit(int(spec.get("signalExit", 42)))
for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGWINCH):
    signal.signal(sig, on_signal)
if spec.get("trapInt"):
    signal.signal(signal.SIGINT, on_signal)
if spec.get("ignoreInt"):
    signal.signal(signal.SIGINT, signal.SIG_IGN)
try:
    foreground = os.tcgetpgrp(0) == os.getpgrp()
except OSError:
    foreground = None
note(event="started", pid=os.getpid(), argv=args, foreground=foreground)
print("fake lead: working on it", flush=True)
for line in spec.get("show", ()):
    print(line, flush=True)
time.sleep(float(spec.get("delay", 0)))
print("fake lead: bye", flush=True)
sys.exit(int(spec.get("exit", 0)))
"""


def make_fake_clis(bin_dir: Path) -> Path:
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name in CLIS:
        body = FAKE_LEAD.format(python=sys.executable, help=HELP)
        write_fake(bin_dir, name, body, help_text=HELP, status_exit=2)
    return bin_dir


def set_lead(spec_file: Path, **spec: Any) -> None:
    spec_file.write_text(json.dumps(spec), encoding="utf-8")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def eventually(check: Callable[[], Any], what: str, timeout: float = 20.0) -> Any:
    """Poll `check` (okstra's files, the fake's log) until it returns something truthy."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def prepare_args(project: Path, launch: str, *, task_id: str = "widget") -> list[str]:
    return [
        "prepare",
        "--project-root",
        str(project),
        "--task-group",
        "perf",
        "--task-id",
        task_id,
        "--task-type",
        "requirements-discovery",
        "--brief",
        "brief.md",
        "--host",
        "terminal",
        "--launch",
        launch,
    ]


def okstra(
    args: list[str], *, cwd: Path, env: dict[str, str], timeout: float = 60
) -> subprocess.CompletedProcess[bytes]:
    proc = subprocess.run(
        [*okstra_cmd(), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()
    return proc


def okstra_json(args: list[str], *, cwd: Path, env: dict[str, str]) -> tuple[int, dict[str, Any]]:
    proc = okstra(args, cwd=cwd, env=env)
    return proc.returncode, orjson.loads(proc.stdout)


def leader(run_dir: Path) -> dict[str, Any]:
    manifest = orjson.loads((run_dir / "run-manifest.json").read_bytes())
    participants = manifest.get("participants") or manifest["executionManifest"]["participants"]
    found: dict[str, Any] = participants[0]
    assert found["participantRef"] == "participant-001"
    return found


def timeline_events(run_dir: Path, event: str) -> list[dict[str, Any]]:
    return [
        e
        for e in read_jsonl(run_dir.parent.parent / "timeline.jsonl")
        if e.get("event") == event and e.get("runId") == run_dir.name
    ]


def base_env(bin_dir: Path, tmp: Path, **extra: str) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE", "OKSTRA_TMUX_SOCKET")
    }
    env.update(
        PATH=f"{bin_dir}:/usr/bin:/bin",
        LEAD_SPEC=str(tmp / "lead.json"),
        LEAD_LOG=str(tmp / "lead.log"),
        **extra,
    )
    return env
