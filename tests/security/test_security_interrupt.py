"""Ctrl-C at any moment of the app's start: exit 130 and one line (trust audit, 8).

Repro: a Ctrl-C while the app started printed a traceback (1 of 270 key bursts).
SIGINT is sent at random points of start-up, 100 times: 96 on the path without a
terminal (interpreter, okstra's imports, the project look-up, the refusal to draw
without a terminal: cheap, so the start is sampled densely) and 4 in a
pseudo-terminal through the app's real start (Textual imported, the app built, drawn
and running: one sent once the screen is drawn, which measures the start, three at
random points of it). Each trial is started with SIGINT blocked, so a signal sent
before okstra's first line (the interpreter's own start-up, which no program's code
can reach) stays pending until okstra's handler is in place and is then delivered to
it — every other point is the real one. The trials run a few at a time, in parallel.
A signal that comes once the refusal is said in full leaves okstra's own status (2),
or, in the instant before the signal is held back, adds the one line after it.
"""

from __future__ import annotations

import os
import pty
import random
import select
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.conftest import okstra_cmd

LINE = b"okstra: interrupted"
ALT_SCREEN = b"\x1b[?1049h"
SAID_ALL = b"See `okstra --help` for all of them.\n"  # the no-terminal refusal's last line


def _blocked() -> None:
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


def _env(tmp: Path) -> dict[str, str]:
    return {**os.environ, "TERM": "xterm-256color", "COLUMNS": "80", "LINES": "24"}


def _judge(code: int, err: bytes, finished_alone: bool) -> str | None:
    """Why the trial failed, or None."""
    if b"Traceback" in err or b"KeyboardInterrupt" in err:
        return f"a traceback: {err[-400:]!r}"
    if finished_alone:
        return None  # it ended before the signal
    if code == 2 and err.endswith(SAID_ALL):
        return None  # the signal came after okstra's last word: its own status stands
    if code == 130 and err.endswith(SAID_ALL + LINE + b"\n"):
        return None  # between the last word and the end: the line, once, after it
    if code != 130:
        return f"exit {code}: {err[-300:]!r}"
    # The app draws on stderr: the line is the last thing said, and said once.
    if err.count(LINE) != 1 or not err.rstrip().endswith(LINE):
        return f"not one line: {err[-300:]!r}"
    if b"\x1b" not in err and err.strip() != LINE:
        return f"more than one line: {err!r}"
    return None


def _headless_trial(project: Path, env: dict[str, str], delay: float) -> str | None:
    proc = subprocess.Popen(
        okstra_cmd(),
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=_blocked,
    )
    time.sleep(delay)
    alone = proc.poll() is not None
    if not alone:
        proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    return _judge(proc.returncode, err, alone and proc.returncode == 2)


def _read_all(fd: int, until: float, stop: bytes | None = None) -> bytes:
    out = b""
    while time.monotonic() < until:
        ready, _, _ = select.select([fd], [], [], 0.05)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
        if stop is not None and stop in out:
            break
    return out


def _in_a_terminal(project: Path, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], int]:
    """okstra with a pseudo-terminal as stdin, stdout and stderr (Textual draws on
    stderr), as a person starts it; returns the process and the terminal's reading end."""
    main, child = pty.openpty()
    proc = subprocess.Popen(
        okstra_cmd(),
        cwd=project,
        env=env,
        stdin=child,
        stdout=child,
        stderr=child,
        preexec_fn=_blocked,
    )
    os.close(child)
    return proc, main


def _interrupt_in_a_terminal(
    proc: subprocess.Popen[bytes], main: int, seen: bytes
) -> tuple[int | None, bytes]:
    """SIGINT, then everything the terminal shows until okstra ends (a minute at most)."""
    proc.send_signal(signal.SIGINT)
    deadline = time.monotonic() + 60
    out = seen
    while proc.poll() is None and time.monotonic() < deadline:
        out += _read_all(main, time.monotonic() + 0.1)  # keep the terminal drained
    if proc.poll() is None:
        proc.kill()
        proc.wait()
        return None, out
    return proc.returncode, out + _read_all(main, time.monotonic() + 0.2)


def _app_trial(project: Path, env: dict[str, str], delay: float) -> str | None:
    proc, main = _in_a_terminal(project, env)
    try:
        seen = _read_all(main, time.monotonic() + delay)
        code, out = _interrupt_in_a_terminal(proc, main, seen)
        if code is None:
            return "still running a minute after SIGINT"
        return _judge(code, out.replace(b"\r\n", b"\n"), False)
    finally:
        os.close(main)


def _app_start_seconds(project: Path, env: dict[str, str]) -> float:
    """How long the app takes to take the screen here (the range the app trials sample)."""
    begun = time.monotonic()
    proc, main = _in_a_terminal(project, env)
    try:
        seen = _read_all(main, begun + 60, stop=ALT_SCREEN)
        took = time.monotonic() - begun
        assert ALT_SCREEN in seen, f"the app did not take the screen in a minute: {seen[-300:]!r}"
        code, out = _interrupt_in_a_terminal(proc, main, seen)
        assert code is not None, "still running a minute after SIGINT"
        verdict = _judge(code, out.replace(b"\r\n", b"\n"), False)
        assert verdict is None, verdict
        return took
    finally:
        os.close(main)


def test_sigint_at_random_points_of_start_up_is_130_and_one_line(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    env = _env(tmp_path)
    rng = random.Random(20261202)
    begun = time.monotonic()
    headless = subprocess.run(
        okstra_cmd(), cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True
    )
    assert headless.returncode == 2  # no terminal: refused, the cheap start-up path
    quick = (time.monotonic() - begun) * 1.2
    slow = _app_start_seconds(project, env) * 1.2
    trials = [(_headless_trial, rng.uniform(0, quick)) for _ in range(96)]
    trials += [(_app_trial, rng.uniform(0, slow)) for _ in range(3)]  # and the one that measured
    with ThreadPoolExecutor(max_workers=6) as pool:
        verdicts = list(pool.map(lambda t: t[0](project, env, t[1]), trials))
    failed = [(i, d, v) for i, ((_, d), v) in enumerate(zip(trials, verdicts, strict=True)) if v]
    assert not failed, failed
