"""(f) The confirm screen's preflight, in process, vs its slowest single probe.

The confirm screen checks every CLI the team will spawn: each CLI's version
command, and the leader's help command for its required flags. The subject is
`okstra_core.launch.checks` on a team whose leader and one critic run Claude Code
and two analysers run Codex (three probes: `claude --version`, `claude --help`,
`codex --version`). The baseline, timed in the same round, is the slowest of those
three probes run alone (the same subprocess call preflight makes): run concurrently,
the checks cannot take less. The sum of the three (what running them one after
another would take) is printed in the notes, with the CPU time the three probes
used (their processes' user + system time): on a machine with fewer free cores than
probes, the probes cannot finish together sooner than that CPU allows.

With the real `claude` and `codex` installed under `.cache/agent-clis` (a Node
package tree) they are used, each with a throw-away HOME and config directory, no
credentials and stdin at /dev/null; otherwise the fake CLIs of the other measurements
(a shell script each), and the row says which.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from ._fixtures import make_machine
from ._harness import Figure, NotAvailable, Stats

REAL_BIN = Path(__file__).resolve().parents[1] / ".cache" / "agent-clis" / "node_modules" / ".bin"
PROBES = (("claude", "--version"), ("claude", "--help"), ("codex", "--version"))


def _team(env: dict[str, str]) -> tuple[list[Any], Any]:
    try:
        from okstra_core.catalog import load_catalog
        from okstra_core.environment import Environment
        from okstra_core.launch import RoleInstance
    except ImportError as exc:
        raise NotAvailable(f"launch not importable: {exc}") from None
    environment = Environment(env=env)
    catalog = load_catalog(environment)
    claude, codex = catalog.provider("claude"), catalog.provider("codex")
    team = [
        RoleInstance("leader", 1, claude, "cli-wrapper"),
        RoleInstance("analyser", 1, codex, "cli-wrapper"),
        RoleInstance("analyser", 2, codex, "cli-wrapper"),
        RoleInstance("critic", 1, claude, "cli-wrapper"),
    ]
    return team, environment


def _real_env(root: Path) -> dict[str, str] | None:
    """An environment with the real CLIs first on PATH, or None when not installed."""
    if not all((REAL_BIN / cli).exists() for cli in ("claude", "codex")):
        return None
    home = root / "real-home"
    for sub in ("claude", "codex"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    path = [str(REAL_BIN)]
    node = shutil.which("node")
    if node:
        path.append(str(Path(node).parent))
    path += ["/usr/bin", "/bin"]
    keep = {k: v for k, v in os.environ.items() if k in ("LANG", "LC_ALL", "TERM", "TMPDIR")}
    return {
        **keep,
        "PATH": os.pathsep.join(path),
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / "claude"),
        "CODEX_HOME": str(home / "codex"),
        "OKSTRA_HOME": str(root / "okstra-home"),
    }


def _time_probe(cli_path: str, flag: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        [cli_path, flag],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
        check=False,
    )
    return time.perf_counter() - start


def _children_cpu() -> float:
    """User + system CPU seconds of the finished child processes so far."""
    times = os.times()
    return times.children_user + times.children_system


def measure(work: Path, repeat: int) -> list[Figure]:
    name = "(f) preflight (confirm screen), 3 probes"
    baseline_name = "slowest single probe"
    work.mkdir(parents=True, exist_ok=True)
    env = _real_env(work)
    which = "real claude + codex"
    if env is None:
        env = make_machine(work / "fake").env
        which = "fake CLIs (real ones not installed)"
    try:
        team, environment = _team(env)
        from okstra_core.launch import preflight
    except NotAvailable as exc:
        return [Figure(name, baseline_name=baseline_name, missing=str(exc))]
    paths = {cli: environment.which(cli) for cli in ("claude", "codex")}
    if None in paths.values():
        return [Figure(name, baseline_name=baseline_name, missing=f"not on PATH: {paths}")]
    checked = preflight(team, environment, timeout=60)  # warm-up, and the verdicts
    failed = [r.message() for r in checked if not r.ok]

    subject: list[float] = []
    slowest: list[float] = []
    summed: list[float] = []
    probes_cpu: list[float] = []
    rounds = max(3, repeat // 2)
    for i in range(rounds):
        singles: list[float] = []

        def run_subject() -> None:
            start, cpu = time.perf_counter(), _children_cpu()
            preflight(team, environment, timeout=60)
            subject.append(time.perf_counter() - start)
            probes_cpu.append(_children_cpu() - cpu)

        if i % 2 == 0:
            run_subject()
        for cli, flag in PROBES if i % 2 == 0 else reversed(PROBES):
            singles.append(_time_probe(str(paths[cli]), flag, env))
        if i % 2:
            run_subject()
        slowest.append(max(singles))
        summed.append(sum(singles))
    note = (
        f"{which}; {rounds} rounds; one after another: {statistics.median(summed) * 1e3:.0f} ms;"
        f" CPU of the probes: {statistics.median(probes_cpu) * 1e3:.0f} ms"
        f" on {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}"
    )
    if failed:
        note += f"; verdicts not ok: {'; '.join(failed)[:120]}"
    return [Figure(name, Stats(tuple(subject)), Stats(tuple(slowest)), baseline_name, note=note)]
