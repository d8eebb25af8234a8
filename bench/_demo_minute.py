"""(i) A newcomer's first minute without any agent CLI: the demo team at work.

What a newcomer does on a fresh machine — no `claude`, `codex` or `gemini`, nothing
logged in, no network needed:

1. `git clone` this repository (a local clone of the checkout being measured);
2. README command 1 as written: the install part, then the app on `demo/`, started in
   a real tmux session (120×40) with a PATH of the system's directories only;
3. the README's answers: `⏎` on "New setup" and on "Start a new task", the group
   `demo`, the id `top-words`, the brief `brief.md`, `d` on the task type (the demo
   project's defaults: the demo team) and `l` on the confirmation;
4. the demo team at work, at the demo agent's own pace (1.5 s a step, as a person
   sees it): the lead opens in its tmux window, starts its workers through okstra,
   they end, and the final report is written, finalized and passes `okstra report
   check`.

Figures: each phase's wall time and the total, against the one-minute bar. Keys are
sent as soon as the app says it is ready for them (`OKSTRA_READY_FILE`), so the figure
is the machine's part plus the demo's pace; a person adds their reading and typing.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from ._first_minute import SIZE, TEXT_ANSWERS, TEXT_KINDS, Terminal, _readme_command, _screen
from ._first_minute import _until as until
from ._harness import Figure, NotAvailable, Stats, clean_env

BAR = 60.0
PHASES = ("clone", "install", "first screen", "setup", "launch", "team at work")
_RUNS_GLOB = "demo/.okstra/tasks/demo/top-words/runs/*"
# The demo lead with okstra's MCP tools writes the report's data in the project (where
# its prompt says); with okstra's commands only, in the run's directory.
_REPORT_GLOBS = ("demo/final-report-*.json", f"{_RUNS_GLOB}/final-report.json")


def _finished(checkout: Path) -> Path | None:
    """The finalized report once every worker in it ended with status 0 (else None)."""
    for report in (r for pattern in _REPORT_GLOBS for r in checkout.glob(pattern)):
        try:
            roles = json.loads(report.read_text(encoding="utf-8")).get("executionRoles")
        except (OSError, ValueError):
            return None  # being written: look again
        workers = [r for r in roles or [] if r.get("role") != "leader"]
        if workers and all(r.get("status") == "exited" for r in workers):
            return report
    return None


def _round(work: Path) -> tuple[dict[str, float], int]:
    """One newcomer without agent CLIs, from `git clone` to the report written."""
    install, app = _readme_command()
    work.mkdir(parents=True)
    checkout, ready = work / "okstra", work / "ready.jsonl"
    (work / "user").mkdir()
    env = clean_env(
        HOME=str(work / "user"),
        OKSTRA_HOME=str(work / "home"),
        OKSTRA_READY_FILE=str(ready),
        PATH="/usr/local/bin:/usr/bin:/bin",
    )
    times: dict[str, float] = {}
    began = time.perf_counter()
    subprocess.run(["git", "clone", "-q", str(Path(__file__).resolve().parents[1]),
                    str(checkout)], env=env, check=True)  # fmt: skip
    times["clone"] = time.perf_counter() - began
    t0 = time.perf_counter()
    proc = subprocess.run(["bash", "-c", install], cwd=checkout, env=env, capture_output=True,
                          text=True, check=False)  # fmt: skip
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
        until(lambda: _screen(ready) == "start", "the start screen")
        times["first screen"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        script = (("start", ""), ("task_pick", ""), *zip(TEXT_KINDS, TEXT_ANSWERS, strict=True))
        for kind, text in script:
            until(lambda kind=kind: _screen(ready) == kind, f"the {kind} screen")
            if text:
                term.keys("-l", text)
            term.keys("Enter")
            keys += len(text) + 1
        until(lambda: _screen(ready) == "task_type", "the task_type screen")
        term.keys("d")
        keys += 1
        until(lambda: _screen(ready) == "confirm", "the confirmation")
        times["setup"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        term.keys("l")
        keys += 1
        until(lambda: any(checkout.glob("demo/.okstra/tasks/*/*/runs/*/workers/*/launch.json")),
              "the first worker started by the demo lead")  # fmt: skip
        times["launch"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        until(lambda: _finished(checkout) is not None, "the report", timeout=120)
        times["team at work"] = time.perf_counter() - t0
    except NotAvailable as exc:
        raise NotAvailable(f"{exc}; screen: {term.screen()}") from None
    finally:
        term.close()
    times["total"] = time.perf_counter() - began
    report = _finished(checkout)
    if report is None:
        raise NotAvailable("the report is gone")
    okstra = checkout / ".venv" / "bin" / "okstra"
    run_dir = next(checkout.glob(_RUNS_GLOB))
    check = subprocess.run(
        [str(okstra), "report", "check", str(run_dir), str(report)],
        env=env, capture_output=True, check=False,
    )  # fmt: skip
    if check.returncode != 0:
        raise NotAvailable(f"the report does not check: {check.stdout[-200:]!r}")
    return times, keys


def measure(work: Path, repeat: int) -> list[Figure]:
    if shutil.which("tmux") is None or shutil.which("git") is None:
        raise NotAvailable("tmux and git are needed")
    rounds = max(1, min(repeat, 3))
    results = [_round(work / f"round-{i}") for i in range(rounds)]
    keys = results[0][1]
    return [
        Figure(
            f"(i) demo minute: {phase}",
            subject=Stats(tuple(r[0][phase] for r in results)),
            baseline=Stats((BAR,)) if phase == "total" else None,
            baseline_name="the one-minute bar" if phase == "total" else "",
            note=f"{keys} keys; no agent CLI; median of {rounds} fresh clones"
            if phase == "total"
            else f"median of {rounds}",
        )
        for phase in (*PHASES, "total")
    ]


if __name__ == "__main__":  # one round, printed: python -m bench._demo_minute
    import tempfile

    with tempfile.TemporaryDirectory(prefix="okstra-demo-minute-") as tmp:
        times, pressed = _round(Path(tmp) / "round")
    print(json.dumps({**{k: round(v, 2) for k, v in times.items()}, "keys": pressed}))
    sys.exit(0)
