"""(h) A newcomer's first minute: `git clone` to a launched lead, driven in real tmux.

What a newcomer does, with the agent CLIs already installed:

1. `git clone` this repository (a local clone of the checkout being measured);
2. README command 1 as written, split at its last `&&`: the install part (a fresh
   virtual environment and `pip install .`, with pip's usual cache), then the
   command that opens the app on the demo project — started in a real tmux session
   (120×40), so the lead opens in a tmux window of its own;
3. the setup in a handful of decisions: `⏎` on "New setup" and on "Start a new task",
   the group `demo`, the id `top-words` and the brief `brief.md` (typed, each with
   `⏎`), then `d` on the task type — every remaining answer its default — and `l` on
   the confirmation;
4. the lead is on screen: its CLI started in its own tmux window, and okstra, which
   watches a new lead until it waits for input, has said so (the app's launch screen
   shows the outcome).

The agent CLIs are stand-ins for `claude` and `codex` (their `--help` lists every flag
okstra requires; started, the lead prints a prompt and waits for input, the way the
real CLI does once logged in): the real CLIs cannot get past their login without the
network.

Figures: each phase's wall time and the total, against the one-minute bar (the ratio
is total / 60 s); the keys pressed are counted. Keys are sent as soon as the app has
said it is ready for them (a line in `OKSTRA_READY_FILE` naming the screen), so the
figure is the machine's part — a person adds their reading and typing time. Up to
three rounds (`--repeat`), each a fresh clone; the median of each phase.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from ._fixtures import _required_flags
from ._harness import Figure, NotAvailable, Stats, clean_env

ROOT = Path(__file__).resolve().parents[1]
BAR = 60.0  # seconds: the newcomer's bar
SIZE = ("120", "40")
TEXT_ANSWERS = ("demo", "top-words", "brief.md")
TEXT_KINDS = ("task_group", "task_id", "brief")
PHASES = ("clone", "install", "first screen", "setup", "launch")


def _readme_command() -> tuple[str, str]:
    """README's first command, split into its install part and the app's command."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("```sh\n", 1)[1].split("```", 1)[0].strip()
    install, _, app = block.rpartition(" && ")
    if not install or "okstra" not in app:
        raise NotAvailable(f"README command 1 is not `<install> && <okstra …>`: {block!r}")
    return install, app


def _fake_clis(bin_dir: Path, marker: Path) -> None:
    """A `claude` and a `codex` that pass okstra's checks and, started, wait for input."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    flags = " ".join(sorted(_required_flags()))
    for name in ("claude", "codex"):
        script = bin_dir / name
        script.write_text(
            "#!/bin/sh\n"
            'case "$1" in\n'
            f'  --version) echo "{name} 9.9.9"; exit 0;;\n'
            f'  --help) echo "usage: {name} {flags}"; exit 0;;\n'
            # Logged in, as `claude auth status` and `codex login status` say it.
            "  auth) echo '{\"loggedIn\": true}'; exit 0;;\n"
            '  login) echo "Logged in using an API key"; exit 0;;\n'
            "esac\n"
            "echo '❯ Try a task'\n"  # the prompt line the waiting pattern knows
            f"echo {name} > {shlex.quote(str(marker))}\n"
            "while read -r line; do echo '❯ Try a task'; done\n",
            encoding="utf-8",
        )
        script.chmod(0o755)


class Terminal:
    """One tmux server of this measurement (its own socket)."""

    def __init__(self, socket: Path) -> None:
        self.base = ["tmux", "-S", str(socket), "-f", "/dev/null"]

    def __call__(self, *args: str) -> str:
        proc = subprocess.run(
            [*self.base, *args], capture_output=True, text=True, timeout=30, check=False
        )
        if proc.returncode != 0:
            raise NotAvailable(f"tmux {args[0]}: {proc.stderr.strip()[:120]}")
        return proc.stdout

    def keys(self, *keys: str) -> None:
        self("send-keys", "-t", "first", *keys)

    def screen(self) -> str:
        return self("capture-pane", "-p", "-t", "first")

    def close(self) -> None:
        subprocess.run([*self.base, "kill-server"], capture_output=True, check=False)


def _until(check: Callable[[], object], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise NotAvailable(f"timed out waiting for {what}")
        time.sleep(0.02)


def _screen(ready: Path) -> str | None:
    """The screen of the app's last "ready for keys" line (`OKSTRA_READY_FILE`)."""
    try:
        lines = ready.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    try:
        return str(json.loads(lines[-1])["screen"]) if lines else None
    except (ValueError, KeyError):
        return None  # a line being written: read again


def _outcome(ready: Path) -> str | None:
    """The launch screen's outcome from the app's ready lines (None before it)."""
    try:
        lines = ready.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        try:
            outcome = json.loads(line).get("outcome")
        except ValueError:
            continue
        if outcome:
            return str(outcome)
    return None


def _round(work: Path) -> tuple[dict[str, float], int]:
    """One newcomer, from `git clone` to the lead waiting for input."""
    install, app = _readme_command()
    work.mkdir(parents=True)
    checkout, home, marker = work / "okstra", work / "home", work / "lead-started"
    ready = work / "ready.jsonl"
    _fake_clis(work / "clis", marker)
    env = clean_env(
        HOME=str(work / "user"),
        OKSTRA_HOME=str(home),
        OKSTRA_READY_FILE=str(ready),
        PATH=os.pathsep.join([str(work / "clis"), os.environ.get("PATH", "/usr/bin:/bin")]),
    )
    (work / "user").mkdir()
    times: dict[str, float] = {}
    began = time.perf_counter()
    subprocess.run(["git", "clone", "-q", str(ROOT), str(checkout)], env=env, check=True)
    times["clone"] = time.perf_counter() - began
    # The shipped demo project names the demo team as its model defaults (a newcomer
    # without an agent CLI sees it work); this measurement is the newcomer whose CLIs
    # are installed, so its clone drops them and the wizard's defaults pick those CLIs.
    (checkout / "demo" / ".okstra" / "project.json").write_text("{}\n", encoding="utf-8")
    t0 = time.perf_counter()
    proc = subprocess.run(
        ["bash", "-c", install], cwd=checkout, env=env, capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise NotAvailable(f"install failed: {proc.stderr.strip()[-160:]}")
    times["install"] = time.perf_counter() - t0
    term = Terminal(work / "tmux.sock")
    keys = 0
    try:
        t0 = time.perf_counter()
        env_args = [f"{k}={v}" for k, v in env.items()]
        term("new-session", "-d", "-x", SIZE[0], "-y", SIZE[1], "-s", "first",
             "-c", str(checkout), "env", *env_args, "bash", "-c", app)  # fmt: skip
        _until(lambda: _screen(ready) == "start", "the start screen")
        times["first screen"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        # What each screen gets, in order: ⏎ on "New setup" and "Start a new task", the
        # three typed answers, `d` on the task type (every later answer its default).
        script = (("start", ""), ("task_pick", ""), *zip(TEXT_KINDS, TEXT_ANSWERS, strict=True))
        for kind, text in script:
            _until(lambda kind=kind: _screen(ready) == kind, f"the {kind} screen")
            if text:
                term.keys("-l", text)
            term.keys("Enter")
            keys += len(text) + 1
        _until(lambda: _screen(ready) == "task_type", "the task_type screen")
        term.keys("d")
        keys += 1
        _until(lambda: _screen(ready) == "confirm", "the confirmation")
        times["setup"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        term.keys("l")
        keys += 1
        _until(marker.exists, "the lead CLI")
        # okstra watched the lead until it waited for input: the launch screen's outcome.
        _until(lambda: _outcome(ready) is not None, "the launch outcome")
        times["launch"] = time.perf_counter() - t0
    except NotAvailable as exc:
        shown = term.screen()
        raise NotAvailable(f"{exc}; last ready line {_screen(ready)!r}; screen: {shown}") from None
    finally:
        term.close()
    times["total"] = time.perf_counter() - began
    return times, keys


def measure(work: Path, repeat: int) -> list[Figure]:
    if shutil.which("tmux") is None:
        raise NotAvailable("tmux is not installed")
    if shutil.which("git") is None:
        raise NotAvailable("git is not installed")
    rounds = max(1, min(repeat, 3))
    results = [_round(work / f"round-{i}") for i in range(rounds)]
    keys = results[0][1]
    figures = []
    for phase in (*PHASES, "total"):
        samples = tuple(r[0][phase] for r in results)
        figures.append(
            Figure(
                f"(h) first minute: {phase}",
                subject=Stats(samples),
                baseline=Stats((BAR,)) if phase == "total" else None,
                baseline_name="the one-minute bar" if phase == "total" else "",
                note=f"{keys} keys pressed; median of {rounds} fresh clones"
                if phase == "total"
                else f"median of {rounds}",
            )
        )
    return figures


if __name__ == "__main__":  # one round, printed: python -m bench._first_minute
    import tempfile

    with tempfile.TemporaryDirectory(prefix="okstra-first-") as tmp:
        times, pressed = _round(Path(tmp) / "round")
    print(json.dumps({**{k: round(v, 2) for k, v in times.items()}, "keys": pressed}))
    sys.exit(0)
