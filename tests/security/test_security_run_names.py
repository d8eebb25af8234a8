"""Property: no string names a run outside the project's `.okstra/tasks/*/*/runs/`.

A project prepared by the installed `okstra`, with decoys planted around its run: a
top-level directory named like the run id, a run directory that is a link to a decoy, a
task that is a link to another task, a nested directory, and another user's project
beside it. Whatever string `locate_run` is given, from wherever, it either refuses with
okstra's own error or gives a real directory (no link on the way) that is one of the
project's run directories.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from okstra_core.errors import OkstraError
from okstra_core.life.locate import locate_run
from tests.security.hostile_runs import RUN, okstra, prepared_project

NOBODY = 65534
ROOT = "@ROOT"
TOKENS = st.sampled_from(
    [
        "..",
        ".",
        "",
        RUN,
        "requirements-discovery-002",
        "perf",
        "widget",
        "linked",
        "runs",
        ".okstra",
        "tasks",
        "run-manifest.json",
        "evil-link-001",
        "sub",
        "*",
        "?",
        "[a-z]*",
        "~",
        "outside",
        "decoy",
        ROOT,
    ]
)
NAMES = st.one_of(
    st.lists(st.one_of(TOKENS, st.text(max_size=6)), min_size=1, max_size=9).map("/".join),
    st.text(max_size=40),
    st.lists(TOKENS, min_size=1, max_size=9).map(lambda parts: "/" + "/".join(parts)),
)


@pytest.fixture(scope="module")
def world() -> Iterator[dict[str, Any]]:
    base = Path(tempfile.mkdtemp(prefix="okstra-names-"))
    try:
        project, env = prepared_project(base)
        okstra(["prepare", "--project-root", str(project), "--task-group", "perf", "--task-id",
                "widget", "--task-type", "requirements-discovery", "--brief", "brief.md",
                "--host", "terminal", "--launch", "none"], project, env)  # fmt: skip
        runs = project / ".okstra/tasks/perf/widget/runs"
        decoy = project / "decoy"
        for where in (project / RUN, decoy, runs / RUN / "sub" / "x-001"):
            where.mkdir(parents=True)
            (where / "run-manifest.json").write_bytes(
                (runs / RUN / "run-manifest.json").read_bytes()
            )
        (runs / "evil-link-001").symlink_to(decoy)
        (project / ".okstra/tasks/perf/linked").symlink_to(project / ".okstra/tasks/perf/widget")
        foreign = base / "outside" / ".okstra/tasks/perf/widget/runs" / RUN
        foreign.mkdir(parents=True)
        (foreign / "run-manifest.json").write_bytes(b"{}")
        os.chown(base / "outside" / ".okstra", NOBODY, NOBODY)
        legit = {
            runs / name
            for name in os.listdir(runs)
            if (runs / name).is_dir() and not (runs / name).is_symlink()
        }
        yield {
            "project": project,
            "starts": [project, project / "src", project / RUN, runs.parent.parent, base],
            "env": {"HOME": str(base), "PATH": env["PATH"]},
            "legit": legit,
        }
    finally:
        shutil.rmtree(base, ignore_errors=True)


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(value=NAMES, start=st.integers(min_value=0, max_value=4))
def test_no_string_names_a_run_outside_the_runs(
    world: dict[str, Any], value: str, start: int
) -> None:
    value = value.replace(ROOT, str(world["project"]))
    where = world["starts"][start]
    (world["project"] / "src").mkdir(exist_ok=True)
    try:
        found = locate_run(value, where, world["env"])
    except OkstraError:
        return
    assert found == Path(os.path.realpath(found)), (value, found)
    assert found in world["legit"], (value, where, found)
    manifest = found / "run-manifest.json"
    assert orjson.loads(manifest.read_bytes())["runId"] == found.name


def test_the_names_a_person_types_are_found(world: dict[str, Any]) -> None:
    project = world["project"]
    runs = project / ".okstra/tasks/perf/widget/runs"
    for value in (RUN, f"widget/{RUN}", f"perf/widget/{RUN}", "perf/widget", str(runs / RUN),
                  f".okstra/tasks/perf/widget/runs/{RUN}/run-manifest.json"):  # fmt: skip
        expected = runs / ("requirements-discovery-002" if value == "perf/widget" else RUN)
        assert locate_run(value, project, world["env"]) == expected, value
