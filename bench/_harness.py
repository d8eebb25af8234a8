"""Timing primitives shared by every measurement.

A figure is always a ratio to a baseline measured in the same run, on the same machine,
interleaved with the subject (subject, baseline, subject, …) so that drift — another
process waking up, the CPU clocking down — lands on both sides alike.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path


class NotAvailable(Exception):
    """The subject of a measurement is not built yet (or failed): print why, no number."""


@dataclass(frozen=True)
class Stats:
    """Repeated timings of one thing, in seconds."""

    samples: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def p95(self) -> float:
        """Nearest-rank 95th percentile (the worst sample when there are few)."""
        ordered = sorted(self.samples)
        return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


@dataclass(frozen=True)
class Figure:
    """One row of the table: subject vs baseline, or why there is no number."""

    name: str
    subject: Stats | None = None
    baseline: Stats | None = None
    baseline_name: str = ""
    note: str = ""
    missing: str | None = None
    # For rows whose figure is not subject/baseline (a growth factor): shown as is.
    ratio_override: float | None = None
    # What the samples are: seconds, or mebibytes (peak resident memory).
    unit: str = "s"

    @property
    def ratio(self) -> float | None:
        if self.ratio_override is not None:
            return self.ratio_override
        if self.subject is None or self.baseline is None or self.baseline.median <= 0:
            return None
        return self.subject.median / self.baseline.median


def interleaved(
    subject: Callable[[], float],
    baseline: Callable[[], float],
    *,
    repeat: int,
    warmup: int = 1,
) -> tuple[Stats, Stats]:
    """Alternate subject and baseline runs; each callable returns its own elapsed time."""
    for _ in range(warmup):
        subject()
        baseline()
    subject_times: list[float] = []
    baseline_times: list[float] = []
    for i in range(repeat):
        # Alternate who goes first so neither always runs on a warm cache.
        if i % 2:
            baseline_times.append(baseline())
            subject_times.append(subject())
        else:
            subject_times.append(subject())
            baseline_times.append(baseline())
    return Stats(tuple(subject_times)), Stats(tuple(baseline_times))


def okstra_argv() -> list[str]:
    """The installed `okstra` command next to this interpreter (else `-m okstra_tui`)."""
    exe = Path(sys.executable).parent / "okstra"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "okstra_tui"]


def run(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    what: str,
    stdin: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run a command once; a failure means the subject is not usable (yet)."""
    proc = subprocess.run(
        list(argv),
        env=dict(env),
        cwd=cwd,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if proc.returncode != 0:
        raise NotAvailable(f"{what}: exit {proc.returncode}: {_why(proc.stdout, proc.stderr)}")
    return proc


def _why(stdout: str, stderr: str) -> str:
    """The gist of a failed okstra command: its JSON error, else the output's end."""
    try:
        error = json.loads(stdout).get("error")
    except (ValueError, AttributeError):
        error = None
    text = str(error) if error else (stderr.strip() or stdout.strip())
    return " ".join(text.split())[:140]


def time_process(argv: Sequence[str], *, env: Mapping[str, str], cwd: Path) -> float:
    """Wall time of one whole process, start to exit (output discarded)."""
    start = time.perf_counter()
    proc = subprocess.run(
        list(argv),
        env=dict(env),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        check=False,
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        tail = proc.stderr[-140:].decode("utf-8", "replace")
        raise NotAvailable(f"{' '.join(argv[-3:])}: exit {proc.returncode}: {tail}")
    return elapsed


# A child's peak RSS as its parent sees it (wait4) includes the parent's memory at the
# moment of the exec (Linux keeps the high-water mark across exec, and a vfork child
# runs in its parent's memory). So the subject is started by a small interpreter
# (no site, ~8 MiB), which reports what wait4 says; it is well under any subject.
_SPAWNER = """
import os, sys
pid = os.posix_spawnp(sys.argv[1], sys.argv[1:], dict(os.environ))
_pid, status, usage = os.wait4(pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)
"""


def peak_rss(argv: Sequence[str], *, env: Mapping[str, str], cwd: Path) -> float:
    """Peak resident memory (MiB) of one whole process (see `_SPAWNER`)."""
    proc = subprocess.run(
        [sys.executable, "-S", "-c", _SPAWNER, *argv],
        env=dict(env),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        check=False,
    )
    try:
        code, kib = (int(part) for part in proc.stdout.split()[-2:])
    except ValueError:
        raise NotAvailable(f"{' '.join(argv[-3:])}: no memory figure") from None
    if code != 0:
        raise NotAvailable(f"{' '.join(argv[-3:])}: exit {code}")
    return kib / 1024  # Linux reports KiB


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without anything that would change okstra's behaviour."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OKSTRA_", "PYTHON", "CLAUDE", "CODEX", "TMUX"))
    }
    env.update(extra)
    return env


def fmt_seconds(value: float) -> str:
    if value >= 1:
        return f"{value:.2f} s"
    if value >= 1e-3:
        return f"{value * 1e3:.1f} ms"
    return f"{value * 1e6:.0f} µs"


def fmt_value(value: float, unit: str) -> str:
    return f"{value:.1f} MiB" if unit == "MiB" else fmt_seconds(value)


def render_table(figures: Sequence[Figure]) -> str:
    """A plain-text table; missing subjects say why instead of showing a number."""
    header = ("measurement", "subject (median)", "p95", "baseline (median)", "ratio", "notes")
    rows: list[tuple[str, ...]] = []
    for f in figures:
        if f.missing is not None:
            rows.append((f.name, "not available yet", "", "", "", f.missing))
            continue
        ratio = f.ratio
        rows.append(
            (
                f.name,
                fmt_value(f.subject.median, f.unit) if f.subject else "",
                fmt_value(f.subject.p95, f.unit) if f.subject else "",
                (
                    f"{fmt_value(f.baseline.median, f.unit)} ({f.baseline_name})"
                    if f.baseline
                    else f.baseline_name
                ),
                f"{ratio:.2f}×" if ratio is not None else "",
                f.note,
            )
        )
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    out = [line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out.extend(line(r) for r in rows)
    return "\n".join(out)
