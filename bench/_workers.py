"""(g) The team at run time: starting a worker, `worker status` of a big team, the runs
index over 10,000 runs — each a whole process, against the bare interpreter.

* `okstra worker start RUN analyser#1 --again --surface background` (the fake CLI exits
  at once; okstra returns as soon as the worker's supervisor is started and recorded).
  Bar: ≤ 0.3 s of okstra's own time — the process's wall time, which is all okstra's:
  the worker runs after it returned.
* `okstra worker status RUN --json` of a run with 50 role executions (all ended:
  every row read, no process alive to wait on). Bar: ≤ 0.3 s.
  On a shared machine the wall time moves with the load; each row's note gives the
  process's CPU time too (user + system, median).
* `okstra runs --json` over a project of 10,000 runs whose index is built (settled
  runs: ranked from `.okstra/runs-index.jsonl`, no manifest opened; the newest 100
  made rows, as the command lists by default). Bar: ≤ 0.5 s. The note gives the CPU
  time of `--limit 0` (every run a row).
  Its baseline is a process that reads the same index alone (`index.listing`); the note
  gives both CPU times and the first listing's time (it builds the index from every
  manifest).

Baseline of the first two: `python -c "import pydantic, orjson"`; each timed interleaved
with its baseline.
"""

from __future__ import annotations

import json
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from ._fixtures import Machine, make_machine
from ._harness import Figure, NotAvailable, interleaved, okstra_argv, run, time_process

BASELINE = [sys.executable, "-c", "import pydantic, orjson"]
BASELINE_NAME = "python -c 'import pydantic, orjson'"
TEAM = 50
RUNS = 10_000
# Without the cyclic garbage collector, as okstra runs a command (`okstra_tui.entry`).
READ_INDEX = (
    "import gc; gc.disable(); import sys; from pathlib import Path; "
    "from okstra_core.life.index import listing; listing(Path(sys.argv[1]))"
)
READ_INDEX_NAME = (
    "a process reading the runs index alone (`okstra_core.life.index.listing`: the index "
    "parsed, the runs directories listed, each manifest's stamp)"
)


def cpu_time(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    """User + system CPU seconds of one whole process (its own, not its children's)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, env=env, cwd=cwd, capture_output=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _cpu_note(argv: list[str], env: dict[str, str], cwd: Path, repeat: int) -> str:
    samples = [cpu_time(argv, env, cwd) for _ in range(max(3, repeat // 2))]
    base = [cpu_time(BASELINE, env, cwd) for _ in range(max(3, repeat // 2))]
    return (
        f"CPU {statistics.median(samples) * 1e3:.0f} ms "
        f"(baseline {statistics.median(base) * 1e3:.0f} ms)"
    )


def _prepare(machine: Machine, okstra: list[str]) -> Path:
    project, env = machine.project, machine.env
    # Workers start only in a project its person trusts (`okstra trust`).
    run([*okstra, "trust", str(project)], env=env, cwd=project, what="okstra trust")
    done = run(
        [
            *okstra,
            "prepare",
            "--project-root",
            str(project),
            "--task-group",
            "bench",
            "--task-id",
            "team",
            "--task-type",
            "requirements-discovery",
            "--brief",
            "brief.md",
            "--host",
            "terminal",
            "--launch",
            "none",
        ],
        env=env,
        cwd=project,
        what="okstra prepare",
    )
    return Path(json.loads(done.stdout)["runDir"])


def _settled(run_dir: Path, timeout: float = 120.0) -> None:
    """Every started worker's end recorded (their supervisors are fast but async)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        manifest = json.loads((run_dir / "run-manifest.json").read_bytes())
        if all(p["status"] != "running" for p in manifest["participants"]):
            return
        time.sleep(0.05)
    raise NotAvailable("workers did not end")


def _many_runs(project: Path, run_dir: Path, count: int) -> None:
    """`count` runs of the prepared one's shape (their manifests copied, ids changed)."""
    manifest = json.loads((run_dir / "run-manifest.json").read_bytes())
    tasks = project / ".okstra" / "tasks"
    for n in range(count):
        task = (
            tasks
            / "bench"
            / f"t{n // 100:03d}"
            / "runs"
            / f"requirements-discovery-{n % 100 + 1:03d}"
        )
        task.mkdir(parents=True, exist_ok=True)
        manifest["runId"] = task.name
        manifest["taskKey"] = f"bench/t{n // 100:03d}"
        (task / "run-manifest.json").write_bytes(json.dumps(manifest).encode())
        (task / "run-inputs.json").write_bytes(b"{}")


def measure(work: Path, repeat: int) -> list[Figure]:
    okstra = okstra_argv()
    try:
        machine = make_machine(work / "workers")
        env, project = machine.env, machine.project
        run_dir = _prepare(machine, okstra)
        start = [
            *okstra,
            "worker",
            "start",
            str(run_dir),
            "analyser#1",
            "--again",
            "--surface",
            "background",
            "--prompt",
            "Say hello.",
        ]
        figures = []
        subject, baseline = interleaved(
            lambda: time_process(start, env=env, cwd=project),
            lambda: time_process(BASELINE, env=env, cwd=project),
            repeat=repeat,
        )
        figures.append(
            Figure(
                "(g) `okstra worker start`, whole process",
                subject,
                baseline,
                BASELINE_NAME,
                note="bar: ≤ 0.3 s; " + _cpu_note(start, env, project, repeat),
            )
        )
        _settled(run_dir)
        while (
            len(json.loads((run_dir / "run-manifest.json").read_bytes())["roleExecutions"]) < TEAM
        ):
            run(start, env=env, cwd=project, what="okstra worker start")
        _settled(run_dir)
        status = [*okstra, "worker", "status", str(run_dir), "--json"]
        subject, baseline = interleaved(
            lambda: time_process(status, env=env, cwd=project),
            lambda: time_process(BASELINE, env=env, cwd=project),
            repeat=repeat,
        )
        figures.append(
            Figure(
                f"(g) `okstra worker status`, {TEAM} role executions",
                subject,
                baseline,
                BASELINE_NAME,
                note="bar: ≤ 0.3 s; " + _cpu_note(status, env, project, repeat),
            )
        )
        figures.append(_index(work, run_dir, env, repeat))
        return figures
    except NotAvailable as exc:
        return [Figure("(g) the team at run time", missing=str(exc))]


def _index(work: Path, run_dir: Path, env: dict[str, str], repeat: int) -> Figure:
    """`okstra runs --json` over 10,000 runs (the index built), against a process that
    only reads the runs index (`index.listing`) of the same project."""
    project = work / "many"
    shutil.rmtree(project, ignore_errors=True)
    project.mkdir(parents=True)
    _many_runs(project, run_dir, RUNS)
    listing = [*okstra_argv(), "runs", "--json"]
    began = time.perf_counter()
    run(listing, env=env, cwd=project, what="okstra runs (the first builds the index)")
    first = time.perf_counter() - began
    read = [sys.executable, "-c", READ_INDEX, str(project)]
    subject, baseline = interleaved(
        lambda: time_process(listing, env=env, cwd=project),
        lambda: time_process(read, env=env, cwd=project),
        repeat=repeat,
    )
    cpu = [cpu_time(listing, env, project) for _ in range(max(3, repeat // 2))]
    cpu_read = [cpu_time(read, env, project) for _ in range(max(3, repeat // 2))]
    every = [cpu_time([*listing, "--limit", "0"], env, project) for _ in range(3)]
    return Figure(
        f"(g) `okstra runs --json` (the newest 100), {RUNS:,} runs, whole process",
        subject,
        baseline,
        READ_INDEX_NAME,
        note=f"bar: ≤ 0.5 s; CPU {statistics.median(cpu) * 1e3:.0f} ms "
        f"(reading the index alone {statistics.median(cpu_read) * 1e3:.0f} ms; "
        f"every run, `--limit 0`: {statistics.median(every) * 1e3:.0f} ms); "
        f"the first listing, which builds the index from every manifest: {first:.1f} s",
    )
