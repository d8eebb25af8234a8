"""A fake worker CLI and helpers of the worker tests (not a test module).

The fake reads its prompt on standard input, as a worker does. Lines of the prompt of
the form `FAKE {"exit": 3, ...}` tell it what to do, so every worker of one run (one
tmux server, one PATH) behaves as its own test wants:

* `exit`: its exit status (default 0); `result`: the text it produces;
* `write`: {path: text} files it writes (relative to where it runs) before anything else;
* `hold`: a path — it stays until that file exists (the test releases it);
* `waitSignal`: it stays until a signal ends it; `ignoreTerm`: SIGTERM does not;
* `say`: lines it prints on stdout before it holds (a question, say);
* `spew`: that many bytes of numbered lines it writes on stdout;
* `usage`: the usage object it reports (`null`: none), `cost` claude's cost.

Asked for JSON (`--output-format json`, like claude) it prints its result as one JSON
result object with tokens and a cost; asked for events (`--json`, like codex), JSONL
events ending with `turn.completed` and its token counts.

It writes its result to the file after `--output-last-message` / `-o` when its argv
has one, else to stdout (its progress lines go to stderr, as a real one-shot CLI's);
notes (started, signals) go as JSON lines to `WORKER_LOG`.
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
from tests.life.life_support import HELP

CLIS = ("claude", "gemini", "codex", "grok", "kimi")

FAKE_WORKER = """#!{python}
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
def say(line, fd=1):
    # One write per line: with PYTHONUNBUFFERED, print() writes the text and its
    # newline apart, and okstra's log could take the other stream's line in between.
    os.write(fd, (line + "\\n").encode())
prompt = sys.stdin.read()
spec = {{}}
for line in prompt.splitlines():
    if line.startswith("FAKE "):
        spec.update(json.loads(line[5:]))
log = os.environ.get("WORKER_LOG")
def note(**kw):
    if log:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(kw) + "\\n")
def on_signal(signum, frame):
    note(event="signal", signal=signum, pid=os.getpid())
    if signum == signal.SIGTERM and spec.get("ignoreTerm"):
        return
    say("fake worker: got signal %d" % signum)
    sys.exit(int(spec.get("signalExit", 143)))
for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
    signal.signal(sig, on_signal)
note(event="started", cli=name, pid=os.getpid(), pgid=os.getpgrp(), argv=args,
     cwd=os.getcwd(), prompt=prompt, tag=spec.get("tag"), path=os.environ.get("PATH"),
     env={{k: v for k, v in os.environ.items() if k.startswith(("FAKE", "WORKER"))}})
def emit(event):
    say(json.dumps(event, separators=(",", ":")))
events = "--json" in args  # like `codex exec --json`: JSONL events on stdout
as_json = "--output-format" in args and args[args.index("--output-format") + 1] == "json"
if "--session-id" not in args and "resume" not in args:
    # Like codex: a CLI that mints its own session id prints it in its header (with
    # --json, as its first event).
    import uuid
    minted = str(uuid.uuid5(uuid.NAMESPACE_URL, prompt))
    if events:
        emit({{"type": "thread.started", "thread_id": minted}})
    else:
        say("session id: " + minted, 2)
if events:
    emit({{"type": "turn.started"}})
    emit({{"type": "item.started", "item": {{"id": "item_0", "type": "command_execution",
          "command": "ls", "aggregated_output": "", "exit_code": None, "status": "in_progress"}}}})
    emit({{"type": "item.completed", "item": {{"id": "item_0", "type": "command_execution",
          "command": "ls", "aggregated_output": "a\\n", "exit_code": 0, "status": "completed"}}}})
say("fake worker: working on it", 2)
say("fake worker: a note on stderr", 2)
for rel, content in (spec.get("write") or {{}}).items():
    os.makedirs(os.path.dirname(os.path.abspath(rel)), exist_ok=True)
    with open(rel, "w", encoding="utf-8") as fh:
        fh.write(content)
for line in spec.get("say", ()):
    say(line)
if spec.get("spew"):  # this many bytes of numbered lines on stdout, as fast as it can
    block = b"".join(b"spew line %08d " % i + b"x" * 80 + b"\\n" for i in range(10000))
    left = int(spec["spew"])
    while left > 0:
        os.write(1, block[:left])
        left -= len(block)
if spec.get("hold"):
    while not os.path.exists(spec["hold"]):
        time.sleep(0.02)
if spec.get("waitSignal"):
    while True:
        signal.pause()
text = spec.get("result", "RESULT: " + prompt.splitlines()[0] if prompt else "RESULT")
out = None
for flag in ("--output-last-message", "-o"):
    if flag in args:
        out = args[args.index(flag) + 1]
if out:
    with open(out, "w", encoding="utf-8") as fh:
        fh.write(text + "\\n")
elif not as_json:
    say(text)
usage = spec.get("usage", "default")
if events:
    message = {{"id": "item_1", "type": "agent_message", "text": text}}
    emit({{"type": "item.completed", "item": message}})
    if usage is not None:
        if usage == "default":
            usage = {{"input_tokens": 2000, "cached_input_tokens": 1500, "output_tokens": 120}}
        emit({{"type": "turn.completed", "usage": usage}})
if as_json:  # like `claude -p --output-format json`: one result object
    session = args[args.index("--session-id") + 1] if "--session-id" in args else None
    result = {{"type": "result", "subtype": "success", "is_error": False, "result": text,
              "session_id": session}}
    if usage is not None:
        if usage == "default":
            usage = {{"input_tokens": 1200, "cache_creation_input_tokens": 300,
                     "cache_read_input_tokens": 500, "output_tokens": 80}}
        result["usage"] = usage
        result["total_cost_usd"] = spec.get("cost", 0.0123)
    emit(result)
say("fake worker: done", 2)
sys.exit(int(spec.get("exit", 0)))
"""


def make_worker_clis(bin_dir: Path) -> Path:
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name in CLIS:
        body = FAKE_WORKER.format(python=sys.executable, help=HELP)
        write_fake(bin_dir, name, body, help_text=HELP, status_exit=2)
    return bin_dir


def fake(first_line: str, **spec: Any) -> str:
    """A prompt for the fake: a first line (echoed as its result) and its behaviour."""
    return f"{first_line}\nFAKE {json.dumps(spec)}\n"


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def eventually(check: Callable[[], Any], what: str, timeout: float = 30.0) -> Any:
    """Poll `check` (okstra's files, the fake's log) until it returns something truthy."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


class World:
    """A project, fake worker CLIs on PATH and one prepared run (no lead launched)."""

    def __init__(self, tmp: Path, **env: str) -> None:
        self.tmp = tmp
        self.project = tmp / "proj"
        self.project.mkdir(parents=True, exist_ok=True)
        (self.project / "brief.md").write_text("Speed up the widget.\n", encoding="utf-8")
        self.bin = make_worker_clis(tmp / "bin")
        self.log = tmp / "worker.log"
        self.env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("TMUX", "TMUX_PANE", "OKSTRA_TMUX_SOCKET", "TMUX_TMPDIR")
        }
        self.env.update(PATH=f"{self.bin}:/usr/bin:/bin", WORKER_LOG=str(self.log), **env)
        self.run_dir = Path()

    def okstra(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
        proc = subprocess.run(
            [*okstra_cmd(), *args],
            cwd=self.project,
            env=self.env,
            capture_output=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        assert b"Traceback" not in proc.stderr, proc.stderr.decode()
        return proc

    def json(self, *args: str) -> tuple[int, dict[str, Any]]:
        proc = self.okstra(*args, "--json")
        return proc.returncode, orjson.loads(proc.stdout)

    def prepare(self, *extra: str, task_type: str = "requirements-discovery") -> Path:
        proc = self.okstra(
            "prepare",
            "--project-root",
            str(self.project),
            "--task-group",
            "perf",
            "--task-id",
            "widget",
            "--task-type",
            task_type,
            "--brief",
            "brief.md",
            "--host",
            "terminal",
            "--launch",
            "none",
            *extra,
        )
        doc = orjson.loads(proc.stdout)
        assert proc.returncode == 0, doc
        self.run_dir = Path(doc["runDir"])
        return self.run_dir

    @property
    def run(self) -> str:
        return self.run_dir.name

    def start(self, who: str, prompt: str, *extra: str) -> tuple[int, dict[str, Any]]:
        return self.json("worker", "start", self.run, who, "--prompt", prompt, *extra)

    def manifest(self) -> dict[str, Any]:
        data: dict[str, Any] = orjson.loads((self.run_dir / "run-manifest.json").read_bytes())
        return data

    def execution(self, ref: str) -> dict[str, Any]:
        return next(e for e in self.manifest()["roleExecutions"] if e["roleExecutionRef"] == ref)

    def participant(self, ref: str) -> dict[str, Any]:
        pref = self.execution(ref)["participantRef"]
        return next(p for p in self.manifest()["participants"] if p["participantRef"] == pref)

    def worker_dir(self, ref: str) -> Path:
        return self.run_dir / "workers" / ref

    def exited(self, ref: str) -> dict[str, Any]:
        """Wait for the worker's exit record (its supervisor writes it)."""
        path = self.worker_dir(ref) / "exit.json"
        eventually(path.exists, f"{ref}/exit.json")
        return dict(orjson.loads(path.read_bytes()))

    def recorded_end(self, ref: str) -> dict[str, Any]:
        """Wait until the manifest records the worker's end."""
        return dict(
            eventually(
                lambda: (
                    (p := self.participant(ref))["status"] in ("exited", "stopped", "lost") and p
                ),
                f"the end of {ref} in the manifest",
            )
        )

    def supervisor_ended(self, ref: str) -> None:
        """Wait until the worker's supervisor process (its recorded parent) has exited:
        after `worker wait` it may still be recording the end in the run's files."""
        pid = int(self.participant(ref)["parentProcessId"])

        def gone() -> bool:
            try:
                stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
            except OSError:
                return True
            return stat.rpartition(")")[2].split()[0] in ("Z", "X")

        eventually(gone, f"the supervisor of {ref} to exit")

    def events(self, kind: str) -> list[dict[str, Any]]:
        timeline = self.run_dir.parent.parent / "timeline.jsonl"
        return [e for e in read_jsonl(timeline) if e.get("event") == kind]

    def started(self, tag: str) -> dict[str, Any]:
        """Wait until the fake worker tagged `tag` started (from its own log)."""
        return dict(
            eventually(
                lambda: next(
                    (
                        e
                        for e in read_jsonl(self.log)
                        if e["event"] == "started" and e["tag"] == tag
                    ),
                    None,
                ),
                f"worker {tag} started",
            )
        )
