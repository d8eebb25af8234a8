"""okstra benchmarks: `python -m bench` (see docs/performance.md).

Benchmarks, not timed tests: every figure is a ratio to a baseline measured in the
same run, so the numbers mean something on any machine.
"""
