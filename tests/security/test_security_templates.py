"""Templates are bounded: a hostile workspace template ends in exit 2, fast, writing nothing.

A workspace (`OKSTRA_WORKSPACE`) may replace `lead.md.j2`. Each payload below is put in
front of the bundled template and the installed `okstra prepare` runs in a subprocess
with a timeout: it must exit 2 with one JSON error naming the template and the bound,
no traceback, no lead prompt written (nor any run left), and well within the time a
person would wait: the whole `okstra prepare` spends well under a minute of processor
time (the render's own limit is 5 s of it). Processor time, not the clock: on a machine
under heavy load a process waits for a processor far longer than it computes.
"""

from __future__ import annotations

import resource
import time
import tracemalloc
from pathlib import Path

import jinja2
import pytest

from okstra_core.paths import bundled_prompts_root
from okstra_core.prepare.template_bounds import (
    BoundedEnvironment,
    BoundExceeded,
    Budget,
    bounded,
    render_bounded,
)
from tests.reliability.reliability_support import (
    assert_clean_failure,
    make_world,
    okstra,
    prepare_argv,
)

# The render stops at 5 s of processor time; a prepare around it takes a second or
# two more. Anything near a minute means a bound did not hold.
CPU = 30.0


def cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


PAYLOADS = {
    # No output and no call inside: only the loop guard sees it.
    "nested-loop": (
        "{% set r = range(100000) %}{% for a in r %}{% for b in r %}{% endfor %}{% endfor %}",
        "iterations",
    ),
    "nested-loop-over-text": (
        "{% set s = 'ab' * 400000 %}{% for a in s %}{% for b in s %}{% endfor %}{% endfor %}",
        "iterations",
    ),
    "string-times": ("{{ 'x' * 10**8 }}", "over the limit"),
    "list-times": ("{% set l = [0] * 10**9 %}{{ l | length }}", "over the limit"),
    "power": ("{{ 7 ** (10**9) }}", "over the limit"),
    "concat-doubling": (
        "{% set s = 'x' * 1000000 %}{% set s = s ~ s %}{% set s = s ~ s %}{{ s }}",
        "over the limit",
    ),
    "center": ("{{ 'x' | center(10**9) }}", "over the limit"),
    "str-method": ("{{ 'x'.ljust(10**9) }}", "over the limit"),
    "str-format": ("{{ '{:>1000000000}'.format(1) }}", "over the limit"),
    "percent-format": ("{{ '%1000000000d' % 1 }}", "over the limit"),
    "replace": (
        "{% set s = 'x' * 1000000 %}{{ s | replace('x', s) }}",
        "over the limit",
    ),
    "join": ("{% set s = 'x' * 1000000 %}{{ ([s] * 100) | join }}", "over the limit"),
    "output": (
        "{% for i in range(100000) %}{{ 'y' * 1000 }}{% endfor %}",
        "output is over",
    ),
    "range": ("{% for i in range(10**9) %}{% endfor %}", "range() of 1,000,000,000 numbers"),
    "recursive-macro": ("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", "recursed"),
    # Exponential: every call is cheap, there are 2**40 of them: the clock stops it.
    "exponential-macro": (
        "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}"
        "{{ f(40) }}",
        "rendering took over 5 s (the limit)",
    ),
    "undefined": ("{{ undefined_name }}", "undefined"),
    "raises": ("{{ 1 // 0 }}", "ZeroDivisionError"),
}


@pytest.mark.slow
@pytest.mark.parametrize("payload", sorted(PAYLOADS))
def test_a_template_past_a_bound_is_exit_2_and_writes_no_prompt(
    tmp_path: Path, payload: str
) -> None:
    text, said = PAYLOADS[payload]
    world = make_world(tmp_path)
    workspace = world.root / "workspace"
    (workspace / "templates").mkdir(parents=True)
    lead = (bundled_prompts_root() / "templates" / "lead.md.j2").read_text()
    (workspace / "templates" / "lead.md.j2").write_text(text + "\n" + lead)
    world.extra_env["OKSTRA_WORKSPACE"] = str(workspace)
    started = cpu_of_children()
    # The timeout is for a hang (a bound that did not hold): generous, for a busy machine.
    run = okstra(world, *prepare_argv(world.project), "--launch=none", timeout=180)
    took = cpu_of_children() - started
    assert_clean_failure(run, code=2)
    error = run.doc["error"]
    assert "lead.md.j2" in error and said in error, error
    assert took < CPU, f"{payload} took {took:.1f} s of processor time"
    assert not list(world.project.rglob("lead-prompt*.md")), "a prompt was written"
    assert not list(world.project.rglob("run-manifest.json")), "a run was left"


def test_the_bundled_templates_render_within_their_bounds(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    run = okstra(world, *prepare_argv(world.project), "--launch=none", timeout=60)
    assert run.code == 0, run.doc
    assert list(world.project.rglob("run-manifest.json"))


def test_a_large_brief_is_not_an_output_past_the_bound(tmp_path: Path) -> None:
    """The output bound is 1 MiB beyond the text a template is given: a 3 MiB brief
    printed once, in the bundled lead prompt, is within it."""
    world = make_world(tmp_path)
    (world.project / "brief.md").write_text("# Brief\n\n" + "word " * 600_000 + "\n")
    run = okstra(world, *prepare_argv(world.project), "--launch=none", timeout=60)
    assert run.code == 0, run.doc


# Text built inside a block — `{% filter %}`, `{% set %}…{% endset %}`, a `{% call %}`
# body — went into a buffer nothing measured: 13–19 s and 2–3 GB before the time limit
# refused them (trust audit, second round, 9). Each is now stopped by the size bound,
# within a second of processor time and 100 MB.
BLOCK_CAPTURES = {
    "filter": "{% filter upper %}{% for i in range(100000) %}{% for j in range(9) %}"
    "{{ 'y' * 1000 }}{% endfor %}{% endfor %}{% endfilter %}",
    "set-block": "{% set s %}{% for i in range(100000) %}{% for j in range(9) %}"
    "{{ 'y' * 1000 }}{% endfor %}{% endfor %}{% endset %}{{ s | length }}",
    "call": "{% macro m() %}{{ caller() | length }}{% endmacro %}{% call m() %}"
    "{% for i in range(100000) %}{% for j in range(9) %}{{ 'y' * 1000 }}{% endfor %}"
    "{% endfor %}{% endcall %}",
}


@pytest.mark.parametrize("form", sorted(BLOCK_CAPTURES))
def test_block_captures_are_bounded_in_size_time_and_memory(form: str) -> None:
    env = BoundedEnvironment(undefined=jinja2.StrictUndefined)
    tracemalloc.start()
    begun = time.process_time()
    try:
        with bounded(Budget({})), pytest.raises(BoundExceeded, match="over"):
            render_bounded(env.from_string(BLOCK_CAPTURES[form]), {})
        took = time.process_time() - begun
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert took < 1.0, f"{form}: {took:.2f} s of processor time"
    assert peak < 100 * 1024 * 1024, f"{form}: {peak / 2**20:.0f} MB"
