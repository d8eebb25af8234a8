"""(e) Scale: 10,000 models over 50 providers, a team of six roles at five instances.

Two figures (okstra promises a next prompt that stays interactive on big pools and
for whole commands that grow well below linearly with the pool):

- the next prompt in process, as in (b), on a pool of 10,000 models over 50 providers
  (two of them without their CLI) and a profile whose six roles are all staffed at
  five instances: `Wizard.prompt()` at every role-model step of the walk. The bar is
  an absolute p95 (50 ms); the ratio column is to (b)'s baseline at the same steps
  (load the catalog, build the pool, list the role's models with availability).
- a whole `okstra wizard show` process at a role-model step half-way through the same
  walk, on the 1,000-model pool and on the 10,000-model pool (same providers, same
  answers), interleaved: the growth is the 10,000 median over the 1,000 one.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

from ._drive import Prompt, step_kind, walk_in_process
from ._fixtures import SCALE_PROFILE, Machine, make_big_pool_machine
from ._harness import Figure, NotAvailable, Stats, interleaved, okstra_argv, time_process
from ._next_prompt import _engine

PROVIDERS = 50
SMALL, LARGE = 1_000, 10_000
P95_BAR = 0.050


def _machine(work: Path, size: int) -> Machine:
    return make_big_pool_machine(
        work / f"pool-{size}", size, providers=PROVIDERS, profile=SCALE_PROFILE
    )


def _walk(
    machine: Machine, repeat: int, stop_after: int | None, cpu: list[float] | None = None
) -> tuple[list[float], list[float], int]:
    """Time each role-model prompt; with `stop_after`, leave the state at that step.

    `cpu`, when given, receives each prompt's CPU time (`time.process_time`): on a
    loaded machine the wall time also counts the time other processes held the CPU.
    """
    wizard_cls, environment_cls, load_catalog, model_pool = _engine()
    environment = environment_cls(env=machine.env)
    wizard = wizard_cls.init(
        machine.state(),
        machine.project,
        host="terminal",
        entry_mode="spawn-process",
        environment=environment,
    )
    subject: list[float] = []
    baseline: list[float] = []
    seen = 0

    class _Stop(Exception):
        pass

    def on_step(prompt: Prompt, _answer: str) -> None:
        nonlocal seen
        if step_kind(prompt) != "role_model":
            return
        seen += 1
        if stop_after is not None and seen > stop_after:
            raise _Stop
        role = str((prompt.get("meta") or {}).get("role") or "leader")
        for i in range(repeat):
            order = (0, 1) if i % 2 == 0 else (1, 0)
            for which in order:
                start = time.perf_counter()
                if which == 0:
                    cpu_start = time.process_time()
                    wizard.prompt()
                    subject.append(time.perf_counter() - start)
                    if cpu is not None:
                        cpu.append(time.process_time() - cpu_start)
                else:
                    catalog = load_catalog(environment)
                    pool = model_pool.from_catalog(catalog, environment)
                    host = catalog.host("terminal")
                    for model in pool.list(role):
                        pool.availability(model.ref, role, host, "spawn-process")
                    baseline.append(time.perf_counter() - start)

    with contextlib.suppress(_Stop):
        walk_in_process(wizard, machine, largest_counts=True, on_step=on_step)
    if seen == 0:
        raise NotAvailable("the walk met no role-model step")
    pool_size = len(model_pool.from_catalog(load_catalog(environment), environment).models())
    return subject, baseline, pool_size


def measure(work: Path, repeat: int) -> list[Figure]:
    figures: list[Figure] = []
    prompt_name = f"(e) next prompt, {LARGE:,} models / {PROVIDERS} providers, 6 roles × 5"
    baseline_name = "load catalog + pool + list role with availability"
    try:
        large = _machine(work, LARGE)
        cpu: list[float] = []
        subject, baseline, actual = _walk(large, max(1, repeat // 5), None, cpu)
        s = Stats(tuple(subject))
        c = Stats(tuple(cpu))
        figures.append(
            Figure(
                prompt_name,
                s,
                Stats(tuple(baseline)),
                baseline_name,
                note=f"p95 {'≤' if s.p95 <= P95_BAR else '>'} {P95_BAR * 1e3:.0f} ms; "
                f"{len(subject)} timings; pool {actual}; "
                f"CPU median {c.median * 1e3:.1f} ms, p95 {c.p95 * 1e3:.1f} ms",
            )
        )
    except NotAvailable as exc:
        figures.append(Figure(prompt_name, baseline_name=baseline_name, missing=str(exc)))
        return figures

    show_name = f"(e) `okstra wizard show` growth {SMALL:,} → {LARGE:,} models"
    try:
        # Both states at the same role-model step (the 12th) of the same walk.
        small = _machine(work, SMALL)
        large_show = _machine(work / "show", LARGE)
        for machine in (small, large_show):
            _walk(machine, 0, stop_after=12)
        okstra = okstra_argv()

        def show(machine: Machine) -> float:
            argv = [*okstra, "wizard", "show", "--state", str(machine.state())]
            return time_process(argv, env=machine.env, cwd=machine.project)

        t_large, t_small = interleaved(
            lambda: show(large_show), lambda: show(small), repeat=max(3, repeat // 2)
        )
    except NotAvailable as exc:
        figures.append(Figure(show_name, missing=str(exc)))
        return figures
    figures.append(
        Figure(
            f"(e) `okstra wizard show`, {LARGE:,} models",
            t_large,
            t_small,
            f"same, {SMALL:,} models",
            note="whole process, role-model step 12",
        )
    )
    figures.append(
        Figure(
            show_name,
            ratio_override=t_large.median / t_small.median,
            baseline_name="bar ≤ 3×",
            note=f"pool ×{LARGE // SMALL}",
        )
    )
    return figures
