"""`launch.checks.run_concurrently`: results in order, at most `limit` at once, errors kept."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from okstra_core.launch.checks import run_concurrently


@settings(max_examples=50, deadline=None)
@given(values=st.lists(st.integers(), max_size=12), limit=st.integers(1, 6))
def test_results_in_order_and_never_more_than_the_limit_at_once(
    values: list[int], limit: int
) -> None:
    lock = threading.Lock()
    running = 0
    peak = 0
    gate = threading.Barrier(min(limit, len(values)) or 1, timeout=5)

    def job(value: int, first_wave: bool) -> Callable[[], int]:
        def run() -> int:
            nonlocal running, peak
            with lock:
                running += 1
                peak = max(peak, running)
            if first_wave:
                gate.wait()  # the first `limit` jobs are all running together
            with lock:
                running -= 1
            return value * 2

        return run

    wave = min(limit, len(values))
    jobs = [job(v, i < wave) for i, v in enumerate(values)]
    assert run_concurrently(jobs, limit) == [v * 2 for v in values]
    assert peak <= limit
    if values:
        assert peak == wave  # they did run concurrently


def test_the_first_error_is_raised_after_every_job_ended() -> None:
    ended: list[int] = []

    def ok(n: int) -> Callable[[], int]:
        def run() -> int:
            ended.append(n)
            return n

        return run

    def boom() -> int:
        raise RuntimeError("probe broke")

    with pytest.raises(RuntimeError, match="probe broke"):
        run_concurrently([ok(1), boom, ok(2), ok(3)], 2)
    assert sorted(ended) == [1, 2, 3]
