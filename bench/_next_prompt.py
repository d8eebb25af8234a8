"""(b) Next-prompt computation, in process, on big pools.

Pools of 100, 300 and 1,000 models over twenty providers (two of them without their
CLI, so some models are unavailable) and a six-role profile staffed at counts up to
five: 27 role-model steps per walk. At every role-model step the engine's
`Wizard.prompt()` is timed: the whole computation of the prompt from the state
(catalog, pool and availability for this step, defaults, the exact option states),
without the state file's read or write.

Baseline, timed at the same steps: what a wizard that is not exact would do — load
the catalog, build the pool, and list the role's models with their availability. The
ratio is the price of exactness (every disabled option carries its reason; a model
is selectable only if a complete valid team extends it).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._drive import Prompt, step_kind, walk_in_process
from ._fixtures import Machine, make_big_pool_machine
from ._harness import Figure, NotAvailable, Stats

POOL_SIZES = (100, 300, 1000)


def _engine() -> tuple[Any, Any, Any, Any]:
    try:
        from okstra_core.catalog import load_catalog
        from okstra_core.environment import Environment
        from okstra_core.pool import ModelPool
        from okstra_core.session import Wizard
    except ImportError as exc:
        raise NotAvailable(f"wizard engine not importable: {exc}") from None
    return Wizard, Environment, load_catalog, ModelPool


def _walk(machine: Machine, repeat: int) -> tuple[list[float], list[float], int]:
    wizard_cls, environment_cls, load_catalog, model_pool = _engine()
    environment = environment_cls(env=machine.env)
    state = machine.state()
    wizard = wizard_cls.init(
        state,
        machine.project,
        host="terminal",
        entry_mode="spawn-process",
        environment=environment,
    )

    def subject() -> float:
        start = time.perf_counter()
        wizard.prompt()
        return time.perf_counter() - start

    def baseline_for(role: str) -> Callable[[], float]:
        def run() -> float:
            start = time.perf_counter()
            catalog = load_catalog(environment)
            pool = model_pool.from_catalog(catalog, environment)
            host = catalog.host("terminal")
            for model in pool.list(role):
                pool.availability(model.ref, role, host, "spawn-process")
            return time.perf_counter() - start

        return run

    subject_times: list[float] = []
    baseline_times: list[float] = []
    pool_size = len(model_pool.from_catalog(load_catalog(environment), environment).models())

    def on_step(prompt: Prompt, _answer: str) -> None:
        if step_kind(prompt) != "role_model":
            return
        role = str((prompt.get("meta") or {}).get("role") or "leader")
        baseline = baseline_for(role)
        for i in range(repeat):
            if i % 2:
                baseline_times.append(baseline())
                subject_times.append(subject())
            else:
                subject_times.append(subject())
                baseline_times.append(baseline())

    walk_in_process(wizard, machine, largest_counts=True, on_step=on_step)
    if not subject_times:
        raise NotAvailable("the walk met no role-model step")
    return subject_times, baseline_times, pool_size


def measure(work: Path, repeat: int) -> list[Figure]:
    baseline_name = "load catalog + pool + list role with availability"
    figures: list[Figure] = []
    medians: dict[int, tuple[float, float]] = {}
    for size in POOL_SIZES:
        name = f"(b) next prompt, {size} models / 20 providers"
        try:
            machine = make_big_pool_machine(work / f"pool-{size}", size)
            subject, baseline, actual = _walk(machine, max(1, repeat // 4))
        except NotAvailable as exc:
            figures.append(Figure(name, baseline_name=baseline_name, missing=str(exc)))
            continue
        s, b = Stats(tuple(subject)), Stats(tuple(baseline))
        medians[size] = (s.median, b.median)
        figures.append(
            Figure(
                name,
                s,
                b,
                baseline_name,
                note=f"{len(subject)} timings over the role-model steps; pool {actual}",
            )
        )
    low, high = POOL_SIZES[0], POOL_SIZES[-1]
    growth = f"(b) growth {low} → {high} models (median ratio)"
    if low in medians and high in medians:
        subject_growth = medians[high][0] / medians[low][0]
        baseline_growth = medians[high][1] / medians[low][1]
        figures.append(
            Figure(
                growth,
                ratio_override=subject_growth,
                baseline_name=f"baseline grew {baseline_growth:.2f}×",
                note=f"pool ×{high // low}; linear would be ×{high // low}",
            )
        )
    else:
        figures.append(Figure(growth, missing="needs both pool sizes"))
    return figures
