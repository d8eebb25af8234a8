"""Helpers of the planted-run tests (not a test module).

A planted run is a real run prepared by okstra (`--launch none`) whose leader
participant the test then rewrites the way a repository's author could: any pid, any
start time, any tmux socket and pane. The victims are real: processes the test starts
itself, a UNIX socket it listens on, a tmux server of its own.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from tests.life.life_support import base_env, make_fake_clis, okstra, prepare_args

DROP = object()  # a value for `plant`: remove the key


def stat_start(pid: int) -> str:
    """Field 22 of /proc/<pid>/stat (read here, independently of okstra)."""
    raw = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    return raw.rpartition(")")[2].split()[19]


def alive(pid: int) -> bool:
    """The process runs (a zombie of ours counts as ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


class World:
    """A project with one prepared run, its run directory and an environment to call okstra."""

    def __init__(self, tmp: Path, **extra_env: str) -> None:
        self.tmp = tmp
        self.project = tmp / "proj"
        self.project.mkdir()
        (self.project / "brief.md").write_text("Speed up the widget.\n", encoding="utf-8")
        self.env = base_env(make_fake_clis(tmp / "bin"), tmp, **extra_env)
        proc = okstra(prepare_args(self.project, "none"), cwd=self.project, env=self.env)
        assert proc.returncode == 0, proc.stderr.decode()
        self.run_dir = Path(json.loads(proc.stdout)["runDir"])
        self.run_id = self.run_dir.name

    @property
    def manifest(self) -> Path:
        return self.run_dir / "run-manifest.json"

    def plant(self, **fields: Any) -> None:
        """Rewrite the leader participant (camelCase keys; `DROP` removes one)."""
        data = json.loads(self.manifest.read_text(encoding="utf-8"))
        lead = next(p for p in data["participants"] if p["participantRef"] == "participant-001")
        for key, value in fields.items():
            if value is DROP:
                lead.pop(key, None)
            else:
                lead[key] = value
        self.manifest.write_text(json.dumps(data), encoding="utf-8")

    def leader(self) -> dict[str, Any]:
        data = json.loads(self.manifest.read_text(encoding="utf-8"))
        found: dict[str, Any] = data["participants"][0]
        return found

    def call(self, *args: str, timeout: float = 60) -> tuple[int, Any, float]:
        """Run `okstra <args>` (JSON when asked); its exit code, output and wall time."""
        began = time.monotonic()
        proc = okstra(list(args), cwd=self.project, env=self.env, timeout=timeout)
        took = time.monotonic() - began
        out: Any = proc.stdout.decode()
        if "--json" in args:
            out = json.loads(proc.stdout) if proc.stdout.strip() else {}
        return proc.returncode, out if out else proc.stderr.decode(), took

    def timeline(self) -> str:
        path = self.run_dir.parent.parent / "timeline.jsonl"
        return path.read_text(encoding="utf-8") if path.exists() else ""


class Listener:
    """A UNIX socket someone listens on; counts every connection made to it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.connections = 0
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.bind(str(path))
        self._sock.listen(8)
        self._sock.settimeout(0.1)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections += 1
            conn.close()

    def close(self) -> int:
        """Stop listening; the number of connections seen."""
        self._stop.set()
        self._thread.join(timeout=5)
        self._sock.close()
        return self.connections


def victim(*argv: str) -> subprocess.Popen[bytes]:
    """A live process okstra never started (the caller kills it)."""
    return subprocess.Popen(list(argv or ("sleep", "1000")), stdin=subprocess.DEVNULL)


def end(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=10)


def private_tmux_dir(base: Path, mode: int = 0o700) -> Path:
    """`<base>/tmux-<uid>`, as tmux makes it (TMUX_TMPDIR=<base> makes it the user's)."""
    directory = base / f"tmux-{os.getuid()}"
    directory.mkdir(parents=True)
    directory.chmod(mode)
    return directory
